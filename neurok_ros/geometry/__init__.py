"""Geometry core: mesh loading and cleaning, normalisation, surface sampling, vertex driving,
dual quaternions and shape metrics."""
