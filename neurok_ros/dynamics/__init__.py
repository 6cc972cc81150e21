"""Latent-space Lagrangian dynamics: contact conditions, Euler–Lagrange solve, integration."""
