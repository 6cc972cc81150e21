"""Training of the NeuROK conditional VAE: pair dataset, trainer (single process or DDP), checkpoints."""
