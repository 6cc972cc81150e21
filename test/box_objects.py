"""Articulated objects made of boxes, with their exact parts and joints, for the physics tests.

Each builder returns (vertices (n, 3) metres, faces (m, 3), Articulation, facts) where facts holds
what an independent reference needs (hinge, axis, the moving part's mesh). z is up.
"""
from __future__ import annotations

import numpy as np
import trimesh

from neurok_ros.articulation.articulation import Articulation, Joint

FREE = 1e3  # rad or m: a joint limit that is never reached


def box(lower, upper) -> trimesh.Trimesh:
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    return trimesh.creation.box(extents=upper - lower, transform=trimesh.transformations.translation_matrix(
        (lower + upper) / 2))


def turned(mesh: trimesh.Trimesh, angle: float, axis, point) -> trimesh.Trimesh:
    mesh = mesh.copy()
    mesh.apply_transform(trimesh.transformations.rotation_matrix(angle, axis, point))
    return mesh


def assemble(parts: list[trimesh.Trimesh], joints: list[Joint]):
    vertices, faces, labels, start = [], [], [], 0
    for label, part in enumerate(parts):
        vertices.append(np.asarray(part.vertices))
        faces.append(np.asarray(part.faces) + start)
        labels.append(np.full(len(part.vertices), label))
        start += len(part.vertices)
    return np.concatenate(vertices), np.concatenate(faces), Articulation(np.concatenate(labels), joints)


def laptop(open_degrees: float = 60.0):
    """A 30 x 20 cm base (2 cm thick) and a 1 cm lid hinged along x at its back edge (y = 0.1, z = 0.02),
    open by open_degrees; q > 0 closes the lid, which lies flat on the base at q = open angle (the upper
    limit); the lower limit lets it open to 150 degrees."""
    hinge = np.array([0.0, 0.1, 0.02])
    alpha = np.radians(open_degrees)
    base = box([-0.15, -0.1, 0.0], [0.15, 0.1, 0.02])
    lid = turned(box([-0.15, -0.1, 0.02], [0.15, 0.1, 0.03]), -alpha, [1, 0, 0], hinge)
    joint = Joint("hinge", "revolute", [1, 0, 0], hinge, -(np.radians(150.0) - alpha), alpha, 0, 1, 1.0)
    V, F, articulation = assemble([base, lid], [joint])
    return V, F, articulation, {"hinge": hinge, "axis": np.array([1.0, 0, 0]), "lid": lid, "base": base,
                                "alpha": alpha}


def cabinet_drawer(travel: float = 0.2):
    """A cabinet (40 x 40 x 30 cm) open at the front (y = 0.2) and a 35 x 35 x 25 cm drawer that slides out
    along +y by up to `travel` m."""
    shell = [box([-0.2, -0.2, 0.0], [0.2, 0.2, 0.02]), box([-0.2, -0.2, 0.28], [0.2, 0.2, 0.3]),
             box([-0.2, -0.2, 0.02], [-0.18, 0.2, 0.28]), box([0.18, -0.2, 0.02], [0.2, 0.2, 0.28]),
             box([-0.18, -0.2, 0.02], [0.18, -0.18, 0.28])]
    cabinet = trimesh.util.concatenate(shell)
    drawer = box([-0.175, -0.15, 0.03], [0.175, 0.2, 0.27])
    joint = Joint("slide", "prismatic", [0, 1, 0], [0, 0.2, 0.15], 0.0, travel, 0, 1, 1.0)
    V, F, articulation = assemble([cabinet, drawer], [joint])
    return V, F, articulation, {"axis": np.array([0.0, 1.0, 0.0]), "drawer": drawer, "travel": travel}


def two_doors():
    """A cabinet with two doors on vertical hinges at its front corners (x = -0.2 and x = 0.2, y = 0.2);
    q > 0 opens either outward (+y), up to 135 degrees."""
    body = box([-0.2, -0.2, 0.0], [0.2, 0.2, 0.4])
    left = box([-0.2, 0.2, 0.0], [-0.005, 0.22, 0.4])
    right = box([0.005, 0.2, 0.0], [0.2, 0.22, 0.4])
    joints = [Joint("left", "revolute", [0, 0, 1], [-0.2, 0.2, 0.0], 0.0, 0.75 * np.pi, 0, 1, 1.0),
              Joint("right", "revolute", [0, 0, -1], [0.2, 0.2, 0.0], 0.0, 0.75 * np.pi, 0, 2, 1.0)]
    V, F, articulation = assemble([body, left, right], joints)
    return V, F, articulation, {}


def chain(first: float = 0.3, second: float = 0.2):
    """A mount and two thin links hanging off it in a row along -y, hinged about x at y = 0 and y = -first,
    z = 0.5, horizontal at q = 0 (a double pendulum released from the horizontal)."""
    z = 0.5
    mount = box([-0.02, 0.0, z - 0.02], [0.02, 0.04, z + 0.02])
    link1 = box([-0.01, -first, z - 0.01], [0.01, 0.0, z + 0.01])
    link2 = box([-0.01, -first - second, z - 0.01], [0.01, -first, z + 0.01])
    joints = [Joint("shoulder", "revolute", [1, 0, 0], [0, 0, z], -FREE, FREE, 0, 1, 1.0),
              Joint("elbow", "revolute", [1, 0, 0], [0, -first, z], -FREE, FREE, 1, 2, 1.0)]
    V, F, articulation = assemble([mount, link1, link2], joints)
    return V, F, articulation, {"links": (link1, link2), "lengths": (first, second), "mount": mount}
