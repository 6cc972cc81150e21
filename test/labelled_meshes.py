"""Meshes merged into one, each labelled with its part, for the articulation stage tests."""
from __future__ import annotations

import numpy as np

from neurok_ros.data.articulated import parts as P
from neurok_ros.geometry.rigid_pieces import welded_pieces


def labelled(meshes: list, parts: list[int]):
    """(vertices (n, 3), faces (m, 3), welded pieces (n,), labels (n,) the part of each mesh's vertices,
    owner (n,) the index of each vertex's mesh)."""
    vertices, faces = P.merge(*meshes)
    labels = np.concatenate([np.full(len(m[0]), p) for m, p in zip(meshes, parts)]).astype(np.int64)
    owner = np.repeat(np.arange(len(meshes)), [len(m[0]) for m in meshes])
    return vertices, faces, welded_pieces(vertices, faces), labels, owner
