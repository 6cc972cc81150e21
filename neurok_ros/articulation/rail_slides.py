"""Rail slides: a carriage that a rail runs through slides along it.

    labels, joints = rail_slides(vertices, faces, pieces, labels, joints)

A cart on its track, a ring on a curtain rod, a slider on a guide bar: neither readout moves them,
since the learned space has seen no rail and the head reads the carriage and its load as one body
turning about something. The geometry says what they are. A welded piece is a **rail** when it is a
straight bar: its longest principal extent is at least `long` times its second. Another piece is a
**carriage** on it when the rail passes through the carriage's inside (generalised winding number
above `inside` at the rail's edges, halfway along the carriage) and the rail
reaches beyond the carriage on both sides by at least `beyond` times the carriage's own length
along it. A bar handle ends at its posts and a pin ends in its hinge, so neither is a rail.

The carriage and everything mounted on it (the pieces that touch it, within `gap` of the diagonal,
or reach inside it, and so on, never through the rail) become one part sliding along the rail's
axis, its limits where the carriage meets the rail's ends. A rail is the fixed side of its slide:
where the carriage held the root part, the rail's part becomes the root. A **bar** on the carriage
(a piece at least `long` times as long as it is wide) that reaches inside the carriage at one end
and touches nothing else is a pendulum hung from it: it turns about its inner end, across both its
own length and the rail, in the plane the carriage travels in (a cart's pole, a trolley's hook
bar), limits ±π. Input and output in the mesh frame and units.
"""
from __future__ import annotations

import numpy as np

from neurok_ros.articulation.articulation import Joint
from neurok_ros.articulation.knob_joints import touched
from neurok_ros.articulation.lever_handles import without_empty_parts


def rail_slides(vertices: np.ndarray, faces: np.ndarray, pieces: np.ndarray, labels: np.ndarray,
                joints: list[Joint], long: float = 10.0, beyond: float = 1.0, inside: float = 0.75,
                gap: float = 0.005) -> tuple[np.ndarray, list[Joint]]:
    """labels (n,) and joints with each carriage on a rail made a sliding part (module docstring);
    vertices (n, 3), faces (m, 3), pieces (n,) the welded piece of each vertex, labels (n,) parts,
    joints parents first."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces, dtype=np.int64)
    gap = gap * float(np.linalg.norm(np.ptp(vertices, axis=0)))
    face_pieces = pieces[faces[:, 0]]
    present = np.unique(face_pieces).tolist()
    bars = {p: bar for p in present if (bar := bar_axis(vertices[pieces == p], long)) is not None}
    labels, joints = labels.copy(), list(joints)
    carried = set()
    for rail, (axis, centre) in bars.items():
        track = vertices[pieces == rail]
        for carriage in present:
            if carriage == rail or carriage in carried:
                continue
            if not rides(vertices, faces, face_pieces, pieces, track, carriage, axis, centre, beyond, inside):
                continue
            group = mounted_group(vertices, faces, face_pieces, pieces, carriage, rail, gap)
            carried.update(group)
            labels, joints = slide(vertices, pieces, labels, joints, rail, carriage, group, axis)
            for bar in group:
                if bar != carriage and bar in bars:
                    labels, joints = pendulum(vertices, faces, face_pieces, pieces, labels, joints, bar, bars[bar],
                                              carriage, axis, gap, inside)
    return labels, joints


def bar_axis(points: np.ndarray, long: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(axis (3,), centre (3,)) of a straight bar (points (k, 3): its longest principal extent at
    least `long` times its second; the centre halfway along it, on its centre line), else None."""
    if len(points) < 4:
        return None
    mean = points.mean(0)
    directions = np.linalg.svd(points - mean, full_matrices=False)[2]
    local = (points - mean) @ directions.T
    extents = np.ptp(local, axis=0)
    if extents[1] <= 0 or extents[0] < long * extents[1]:
        return None
    return directions[0], mean + directions.T @ (0.5 * (local.min(0) + local.max(0)))


def winding(vertices: np.ndarray, faces: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(k,) generalised winding numbers of points (k, 3) about the surface (vertices, faces)."""
    import igl

    return np.asarray(igl.winding_number(np.ascontiguousarray(vertices), np.ascontiguousarray(faces, dtype=np.int64),
                                         np.ascontiguousarray(points, dtype=np.float64)))


def rides(vertices, faces, face_pieces, pieces, track: np.ndarray, carriage: int, axis, centre, beyond: float,
          inside: float) -> bool:
    """Whether `carriage` rides on the rail whose vertices are track (k, 3) (axis, centre its centre
    line): the line passes through it (the rail's whole cross-section is inside it) and the rail
    reaches beyond it both ways by `beyond` times its length along the axis."""
    along = (track - centre) @ axis
    span = (vertices[pieces == carriage] - centre) @ axis
    length = np.ptp(span)
    if along.min() > span.min() - beyond * length or along.max() < span.max() + beyond * length:
        return False
    across = np.linalg.svd(np.eye(3) - np.outer(axis, axis))[0][:, :2].T  # (2, 3) unit directions across
    reach = np.abs((track - centre) @ across.T).max(0)  # the rail's half-widths
    middle = centre + axis * 0.5 * (span.min() + span.max())
    probes = middle + np.concatenate([across * reach[:, None], -across * reach[:, None]])
    return bool(np.all(winding(vertices, faces[face_pieces == carriage], probes) > inside))


def mounted_group(vertices, faces, face_pieces, pieces, carriage: int, rail: int, gap: float) -> list[int]:
    """The carriage and the pieces mounted on it: those that touch it (within gap, mesh units) or
    reach inside it, and so on, never through the rail."""
    group, frontier = [carriage], [carriage]
    while frontier:
        piece = frontier.pop()
        near = set(touched(vertices, faces, face_pieces, piece, gap))
        inner = winding(vertices, faces[face_pieces == piece], vertices) > 0.5
        near.update(np.unique(pieces[inner]).tolist())
        for other in sorted(near - {rail, *group}):
            group.append(int(other))
            frontier.append(int(other))
    return group


def slide(vertices, pieces, labels, joints, rail: int, carriage: int, group: list[int], axis) -> tuple:
    """labels and joints with the group (pieces) a part sliding along the rail's axis."""
    moving = np.isin(pieces, group)
    on_rail = pieces == rail
    rail_part = int(np.bincount(labels[on_rail]).argmax())
    if np.any(labels[moving] == 0) and rail_part != 0:  # the rail is the fixed side: it becomes the root
        labels[on_rail | (labels == rail_part)] = 0
        joints = [j for j in joints if j.child != rail_part]
        rail_part = 0
    part = int(labels.max()) + 1
    labels[moving] = part
    along = vertices[on_rail] @ axis
    span = vertices[pieces == carriage] @ axis
    origin = vertices[pieces == carriage].mean(0)
    joints.append(Joint(f"joint_{part}", "prismatic", axis, origin, float(along.min() - span.min()),
                        float(along.max() - span.max()), rail_part, part, 0.5))
    return without_empty_parts(labels, joints)


def pendulum(vertices, faces, face_pieces, pieces, labels, joints, bar: int, line: tuple, carriage: int,
             travel, gap: float, inside: float) -> tuple:
    """labels and joints with `bar` a part swinging about its end inside the carriage, across the
    travel direction, when it reaches inside the carriage at one end and touches nothing else
    outside it."""
    axis, centre = line
    along = (vertices[pieces == bar] - centre) @ axis
    ends = np.array([centre + axis * along.min(), centre + axis * along.max()])
    own_faces = faces[face_pieces == carriage]
    held = winding(vertices, own_faces, ends) > inside
    outside = [q for q, points in touched(vertices, faces, face_pieces, bar, gap).items()
               if q != carriage and np.any(winding(vertices, own_faces, points) <= 0.5)]
    turn = np.cross(axis, travel)
    if held.sum() != 1 or outside or np.linalg.norm(turn) < 0.5:
        return labels, joints
    host = int(np.bincount(labels[pieces == carriage]).argmax())
    part = int(labels.max()) + 1
    labels = labels.copy()
    labels[pieces == bar] = part
    return labels, [*joints, Joint(f"joint_{part}", "revolute", turn / np.linalg.norm(turn), ends[int(np.argmax(held))],
                                   -np.pi, np.pi, host, part, 0.5)]
