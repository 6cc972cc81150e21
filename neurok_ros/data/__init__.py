"""4D dataset: procedural articulated objects and MuJoCo-simulated elastic bodies and cloth."""
