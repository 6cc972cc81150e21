"""Mass matrix of the generalised coordinates: M(q) = J^T diag(m) J."""
import torch


def mass_matrix(jacobian: torch.Tensor, masses: torch.Tensor, eps: float = 0.0) -> torch.Tensor:
    """M = J^T diag(m) J + eps I, (k_q, k_q), kg m^2 per unit q^2.

    jacobian: (3n, k_q) metres per unit q, rows x0 y0 z0 x1 ...; masses: (n,) kg; eps: absolute
    Tikhonov term in the units of M.
    """
    weights = masses.repeat_interleave(3)
    m = jacobian.T @ (weights[:, None] * jacobian)
    if eps:
        m = m + eps * torch.eye(m.shape[0], dtype=m.dtype, device=m.device)
    return m


def regularise(m: torch.Tensor, relative: float) -> torch.Tensor:
    """M + eps I with eps = relative * mean diagonal of M (plus the dtype's tiny, so M = 0 solves)."""
    eps = relative * torch.diagonal(m).mean() + torch.finfo(m.dtype).tiny
    return m + eps * torch.eye(m.shape[0], dtype=m.dtype, device=m.device)


def kinetic_energy(m: torch.Tensor, qdot: torch.Tensor) -> torch.Tensor:
    """T = 1/2 qdot^T M qdot, joules (scalar). m: (k_q, k_q); qdot: (k_q,)."""
    return 0.5 * qdot @ (m @ qdot)
