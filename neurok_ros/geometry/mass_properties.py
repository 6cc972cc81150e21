"""Mass properties of a triangle mesh piece, and point masses that carry them exactly.

A closed (watertight, consistently oriented) piece is a solid of `density` kg/m^3; any other piece
is a thin shell of `surface_density` kg/m^2 (default density * SHELL_THICKNESS). Units: metres,
kilograms; inertia about the centre of mass, mesh-frame axes.
"""
from __future__ import annotations

import numpy as np

DENSITY = 1000.0  # kg/m^3, solid pieces (a dense plastic)
SHELL_THICKNESS = 0.002  # m: surface_density defaults to density * SHELL_THICKNESS (kg/m^2)
MIN_MASS = 1e-6  # kg, floor for degenerate pieces
MIN_INERTIA = 1e-12  # kg m^2, floor for each principal moment


def _shell_properties(triangles: np.ndarray, surface_density: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass (kg), centre of mass (3,) and inertia (3, 3) about it of a thin shell of triangles (m, 3, 3)."""
    area = 0.5 * np.linalg.norm(np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]),
                                axis=1)
    mass = surface_density * area.sum()
    if mass <= 0:
        return 0.0, triangles.reshape(-1, 3).mean(0), np.zeros((3, 3))
    centre = surface_density * (area[:, None] * triangles.mean(1)).sum(0) / mass
    t = triangles - centre
    s = t.sum(1)  # per triangle: integral of x x^T dA = A/12 (sum v v^T + s s^T)
    second = surface_density * np.einsum("f,fij->ij", area / 12,
                                         np.einsum("fvi,fvj->fij", t, t) + s[:, :, None] * s[:, None, :])
    return mass, centre, np.trace(second) * np.eye(3) - second


def _solid_properties(triangles: np.ndarray, density: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass (kg), centre of mass (3,) and inertia (3, 3) about it of the solid a closed surface of
    triangles (m, 3, 3) bounds, outward faces; a negative mass means inward faces. Each face spans a
    tetrahedron with a reference point o (the vertices' mean), of signed volume (a.(b x c))/6 and
    integral of x x^T dV = V/20 (sum v v^T + s s^T) over its corners relative to o (o adds nothing)."""
    origin = triangles.reshape(-1, 3).mean(0)
    t = triangles - origin
    volumes = np.einsum("fi,fi->f", t[:, 0], np.cross(t[:, 1], t[:, 2])) / 6.0
    volume = volumes.sum()
    if volume == 0:
        return 0.0, origin, np.zeros((3, 3))
    s = t.sum(1)
    first = (volumes[:, None] * s / 4.0).sum(0) / volume  # the centre, relative to o
    second = np.einsum("f,fij->ij", volumes / 20.0, np.einsum("fvi,fvj->fij", t, t) + s[:, :, None] * s[:, None, :])
    second = density * (second - volume * np.outer(first, first))  # about the centre of mass
    return density * volume, origin + first, np.trace(second) * np.eye(3) - second


def is_closed(vertices: np.ndarray, faces: np.ndarray) -> bool:
    """Whether faces (m, 3) form closed, consistently oriented surfaces once coincident vertices are merged:
    every directed edge is matched by its reverse (touching closed components count as closed)."""
    _, merged = np.unique(np.asarray(vertices), axis=0, return_inverse=True)
    f = merged.reshape(-1)[faces]
    edges = f[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2).astype(np.int64)
    n = int(f.max()) + 1 if len(f) else 0
    forward, backward = np.sort(edges[:, 0] * n + edges[:, 1]), np.sort(edges[:, 1] * n + edges[:, 0])
    return len(f) > 0 and np.array_equal(forward, backward)


def mass_properties(vertices: np.ndarray, faces: np.ndarray, density: float = DENSITY,
                    surface_density: float | None = None) -> tuple[float, np.ndarray, np.ndarray, bool]:
    """Mass (kg), centre of mass (3,) m and inertia (3, 3) kg m^2 about it (mesh-frame axes), and whether
    the piece was a closed solid (density) rather than a thin shell (surface_density, default
    density * SHELL_THICKNESS); floored (MIN_MASS, MIN_INERTIA, triangle inequality) so degenerate
    pieces stay simulable. Overlapping closed components count their shared volume twice."""
    vertices, faces = np.asarray(vertices, np.float64).reshape(-1, 3), np.asarray(faces, np.int64).reshape(-1, 3)
    surface_density = density * SHELL_THICKNESS if surface_density is None else surface_density
    mass, centre, inertia = 0.0, vertices.mean(0) if len(vertices) else np.zeros(3), np.zeros((3, 3))
    solid = is_closed(vertices, faces)
    if solid:
        mass, centre, inertia = _solid_properties(vertices[faces], density)
        if mass < 0:  # closed but facing inwards
            mass, centre, inertia = _solid_properties(vertices[faces[:, ::-1]], density)
        solid = bool(mass > 0)
    if not solid and len(faces):
        mass, centre, inertia = _shell_properties(vertices[faces], surface_density)
    moments, axes = np.linalg.eigh(0.5 * (inertia + inertia.T))
    moments = np.maximum(moments, MIN_INERTIA)  # ascending
    moments[:2] += 0.5 * max(moments[2] - moments[0] - moments[1], 0.0)  # triangle inequality
    return max(mass, MIN_MASS), centre, (axes * moments) @ axes.T, solid


def equivalent_points(mass: float, centre: np.ndarray, inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Six points (6, 3) metres of mass/6 kg each (6,) at centre +- s_i e_i along the principal axes e_i,
    with the body's mass, centre of mass and inertia (3, 3) exactly: the second moment along e_i is
    sigma_i = tr(I)/2 - I_i = m s_i^2 / 3. So a rigid body's dynamics under any force is exact."""
    moments, axes = np.linalg.eigh(0.5 * (np.asarray(inertia) + np.asarray(inertia).T))
    sigma = np.maximum(0.5 * moments.sum() - moments, 0.0)
    spread = np.sqrt(3.0 * sigma / mass)
    offsets = (axes * spread).T  # (3, 3): row i = s_i e_i
    points = np.asarray(centre, dtype=np.float64) + np.concatenate([offsets, -offsets])
    return points, np.full(6, mass / 6.0)
