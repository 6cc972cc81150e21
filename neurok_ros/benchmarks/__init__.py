"""Benchmarks run by `make bench` (`neurok bench`); results go to docs/benchmarks.md."""
