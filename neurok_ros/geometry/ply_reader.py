"""Triangle PLY files read with numpy alone, so a command that loads one need not import trimesh
(which, with the networkx and scipy.optimize it pulls in, takes about 0.5 s to import on 2 cores).

    arrays = read_triangle_ply(data)   # (V (n, 3) float64, F (m, 3) int64), or None

It takes the layout mesh writers use for a triangle mesh: ascii or binary of either endianness, a
`vertex` element of scalar properties among which x, y, z, then a `face` element whose only property
is a list of vertex indices, every face a triangle; nothing else. For anything else (quads, other
elements, a face colour, a malformed header) it answers None and the caller reads the file with
trimesh, which says what is wrong with it. Validation is the caller's (mesh_io).
"""
from __future__ import annotations

import numpy as np

_TYPES = {"char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2", "int16": "i2",
          "ushort": "u2", "uint16": "u2", "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
          "float": "f4", "float32": "f4", "double": "f8", "float64": "f8"}
_ORDER = {"binary_little_endian": "<", "binary_big_endian": ">"}


def _header(data: bytes):
    """(format, [(element, count, [property words])], body offset), or None."""
    if not data.startswith(b"ply"):
        return None
    end = data.find(b"end_header", 0, 65536)
    if end < 0:
        return None
    newline = data.find(b"\n", end)
    if newline < 0:
        return None
    lines = data[:end].decode("ascii", errors="replace").splitlines()[1:]
    form, elements = None, []
    for line in lines:
        words = line.split()
        if not words or words[0] in ("comment", "obj_info"):
            continue
        if words[0] == "format" and len(words) == 3:
            form = words[1]
        elif words[0] == "element" and len(words) == 3 and words[2].isdigit():
            elements.append((words[1], int(words[2]), []))
        elif words[0] == "property" and elements:
            elements[-1][2].append(words[1:])
        else:
            return None
    return form, elements, newline + 1


def _layout(elements):
    """(vertex property names and types, face count type, face index type), or None."""
    if [name for name, _, _ in elements] != ["vertex", "face"]:
        return None
    vertex_props, face_props = elements[0][2], elements[1][2]
    if any(len(p) != 2 or p[0] not in _TYPES for p in vertex_props):
        return None
    names = [p[1] for p in vertex_props]
    if not {"x", "y", "z"} <= set(names) or len(set(names)) != len(names):
        return None
    if len(face_props) != 1 or len(face_props[0]) != 4 or face_props[0][0] != "list":
        return None
    _, count_type, index_type, name = face_props[0]
    if name not in ("vertex_indices", "vertex_index") or count_type not in _TYPES or index_type not in _TYPES:
        return None
    return [(p[1], _TYPES[p[0]]) for p in vertex_props], _TYPES[count_type], _TYPES[index_type]


def read_triangle_ply(data: bytes):
    """(V (n, 3) float64, F (m, 3) int64) from the bytes of a triangle PLY file, or None for a layout
    this reader does not take (module docstring)."""
    header = _header(data)
    if header is None:
        return None
    form, elements, start = header
    layout = _layout(elements)
    if layout is None:
        return None
    vertex_props, count_type, index_type = layout
    n, m = elements[0][1], elements[1][1]
    names = [name for name, _ in vertex_props]
    if form == "ascii":
        tokens = data[start:].split()
        width = len(vertex_props)
        if len(tokens) != n * width + 4 * m:
            return None
        try:
            table = np.array(tokens[:n * width], dtype=np.float64).reshape(n, width)
            faces = np.array(tokens[n * width:], dtype=np.int64).reshape(m, 4)
        except ValueError:
            return None
        if m and not np.all(faces[:, 0] == 3):
            return None
        return table[:, [names.index(a) for a in "xyz"]], faces[:, 1:]
    if form not in _ORDER:
        return None
    order = _ORDER[form]
    vertex_type = np.dtype([(name, order + kind) for name, kind in vertex_props])
    face_type = np.dtype([("count", order + count_type), ("indices", order + index_type, 3)])
    if len(data) - start != n * vertex_type.itemsize + m * face_type.itemsize:
        return None
    table = np.frombuffer(data, vertex_type, n, start)
    faces = np.frombuffer(data, face_type, m, start + n * vertex_type.itemsize)
    if m and not np.all(faces["count"] == 3):
        return None
    V = np.stack([table[a].astype(np.float64) for a in "xyz"], axis=1)
    return V, faces["indices"].astype(np.int64)
