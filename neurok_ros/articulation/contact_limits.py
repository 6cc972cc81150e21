"""Joint limits where a moving part first runs into the rest of the object (a lid onto its base).

The learned motions say how far a part plausibly moves; the geometry says where it must stop. For
each joint, samples of the moving subtree's surface are swept along the joint, each way, in steps
of STEP_DEG (revolute, up to a half turn) or STEP_FRACTION of the bounding-box diagonal (prismatic,
up to one diagonal). The part collides where at least SHARE of the samples lie inside the rest of
the object (generalised winding number), deeper than DEPTH of the diagonal; samples already inside
at the input pose are left out. The joint's limit that way becomes the last pose free of the
collision, located to 1/16 of a step, whether the learned motions reached that far or not (the
geometry is the stop). Where no collision is met, the part is free that way: a revolute joint may
turn a half turn, a prismatic one slide its own length along its axis (a drawer out of its carcass),
or as far as the learned motions went where they went further. The learned motions move small
parts little (a cabinet door's can span a degree), so they are no stop. Only a closed rest of the
object is swept against (an open shell has no inside); without one, the learned limits stay.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.articulation.articulation import Articulation, Joint

STEP_DEG = 5.0
STEP_FRACTION = 0.02
DEPTH = 0.005  # of the bounding-box diagonal
SHARE = 0.05  # of the moving samples
SAMPLES = 256
BISECTIONS = 4


def moved_along(points: np.ndarray, joint: Joint, q: float) -> np.ndarray:
    """points (n, 3) moved by the joint's coordinate q (rad or mesh units); joint: anything with a
    type, a unit axis and an origin."""
    if joint.type == "prismatic":
        return points + q * joint.axis
    from neurok_ros.dynamics.joint_tree import rotation

    return (points - joint.origin) @ rotation(joint.axis, q).T + joint.origin


def _colliding(static_v, static_f, sweeps: np.ndarray, exempt: np.ndarray, depth: float) -> np.ndarray:
    """(K,) bool per pose: sweeps (K, n, 3) are the moving samples at K poses, evaluated in one
    pass (libigl builds its trees once per call)."""
    from neurok_ros.geometry.occupancy import surface_distance, winding_inside

    count, n = sweeps.shape[:2]
    flat = sweeps.reshape(-1, 3)
    used = static_v[np.unique(static_f)]
    candidates = np.flatnonzero(np.all((flat >= used.min(0)) & (flat <= used.max(0)), axis=1)
                                & np.tile(~exempt, count))  # only a point in the box can be inside
    inside = np.zeros(len(flat), dtype=bool)
    inside[candidates] = winding_inside(static_v, static_f, flat[candidates])
    deep = np.zeros(len(flat), dtype=bool)
    if inside.any():
        deep[inside] = surface_distance(static_v, static_f, flat[inside]) > depth
    return deep.reshape(count, n).sum(1) >= SHARE * n


def swept_stop(static_v, static_f, points, joint: Joint, direction: float, diagonal: float) -> float | None:
    """The last q (signed, rad or mesh units) the points reach along `direction` before they collide
    with the closed mesh (static_v, static_f), or None when they never do within the sweep."""
    from neurok_ros.geometry.occupancy import winding_inside

    depth = DEPTH * diagonal
    exempt = winding_inside(static_v, static_f, points)  # inside at rest: not a collision of the sweep
    step = np.radians(STEP_DEG) if joint.type == "revolute" else STEP_FRACTION * diagonal
    reach = np.pi if joint.type == "revolute" else diagonal
    poses = step * np.arange(1, int(reach / step) + 1)
    hits = _colliding(static_v, static_f, np.stack([moved_along(points, joint, direction * q) for q in poses]), exempt,
                      depth)
    if not hits.any():
        return None
    first = int(np.argmax(hits))
    free, hit = (poses[first - 1] if first else 0.0), poses[first]
    fine = np.linspace(free, hit, 2 ** BISECTIONS + 1)[1:-1]
    inner = _colliding(static_v, static_f, np.stack([moved_along(points, joint, direction * q) for q in fine]), exempt,
                       depth)
    if inner.any():
        hit = fine[int(np.argmax(inner))]
        free = fine[int(np.argmax(inner)) - 1] if np.argmax(inner) else free
    else:
        free = fine[-1]
    return direction * free


def contact_limits(vertices: np.ndarray, faces: np.ndarray, articulation: Articulation, seed: int = 0) -> Articulation:
    """The articulation with each joint's limits cut to where its moving part first collides with the
    rest of the object (vertices (n, 3), faces (m, 3) in the articulation's frame); see the module
    docstring. Joints are changed in place and returned."""
    from neurok_ros.articulation.urdf import face_labels

    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    diagonal = float(np.linalg.norm(np.ptp(vertices, axis=0)))
    per_face = face_labels(faces, articulation.labels)
    for joint in articulation.joints:
        swept = swept_part(vertices, faces, per_face, articulation, joint, seed)
        if swept is None:
            continue
        moving_vertices, static_faces, points = swept
        free = np.pi if joint.type == "revolute" else float(np.ptp(vertices[moving_vertices] @ joint.axis))
        for direction in (1.0, -1.0):
            stop = swept_stop(vertices, static_faces, points, joint, direction, diagonal)
            if stop is None:
                stop = direction * max(free, direction * (joint.upper if direction > 0 else joint.lower))
            if direction > 0:
                joint.upper = max(stop, 0.0)
            else:
                joint.lower = min(stop, 0.0)
    return articulation


def swept_part(vertices: np.ndarray, faces: np.ndarray, per_face: np.ndarray, articulation: Articulation,
               joint: Joint, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """What a joint sweeps against what: the moving subtree's vertices (n,) bool, the faces (s, 3) of
    the rest of the object and SAMPLES surface samples (SAMPLES, 3) of the moving faces; None when
    nothing moves, nothing stays, or the rest is not closed (no inside to run into). per_face: the
    part label of each face (urdf.face_labels)."""
    from neurok_ros.geometry.mass_properties import is_closed
    from neurok_ros.geometry.surface_sampling import sample_surface

    moving_vertices = articulation.subtree(joint.child)
    moving = np.isin(per_face, np.unique(articulation.labels[moving_vertices]))
    static_faces = faces[~moving]
    if not moving.any() or not len(static_faces) or not is_closed(vertices, static_faces):
        return None
    points = sample_surface(vertices, faces[moving], SAMPLES, np.random.default_rng(seed)).points
    return moving_vertices, static_faces, points
