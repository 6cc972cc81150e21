"""Export an `Articulation` of a mesh as a URDF with one mesh link per part (MuJoCo- and yourdfpy-loadable).

Units are taken as metres and kilograms (the URDF convention): pass a mesh in metres. Frames: every
link frame is world-aligned (identity orientation at q = 0); the root link's frame is the mesh frame,
a child link's frame sits at its joint's `origin`. A joint's <origin xyz> is the child frame origin
minus the parent frame origin and its <axis> is the joint axis unchanged. Each link's mesh piece is
written as an OBJ in `<stem>_meshes/` (relative filename), in the link's frame, so the model at
q = 0 reproduces the input mesh exactly. Mass properties: a closed (watertight, outward) piece is a
solid of `density` kg/m^3; any other piece is a thin shell of `surface_density` kg/m^2.
"""
from __future__ import annotations

import re
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from neurok_ros.articulation.articulation import Articulation
from neurok_ros.geometry.mass_properties import DENSITY, mass_properties

EFFORT = 100.0  # N m (revolute) or N (prismatic)
VELOCITY = 2.0  # rad/s (revolute) or m/s (prismatic)
FLAT_BACKING = 1e-5  # a flat piece's mesh file gets a reversed copy this fraction of its size behind it
# MuJoCo's URDF importer: keep visuals and per-link bodies, read paths as written, fix inertias
MUJOCO_COMPILER = dict(discardvisual="false", strippath="false", fusestatic="false", balanceinertia="true",
                       angle="radian")


def face_labels(faces: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(m,) part of each face: the label shared by at least two of its vertices, else its first vertex's."""
    f = labels[np.asarray(faces)]
    return np.where((f[:, 1] == f[:, 2]) & (f[:, 0] != f[:, 1]), f[:, 1], f[:, 0])


def _link_names(articulation: Articulation) -> list[str]:
    """Unique XML/file-safe link names from articulation.part_names."""
    names = []
    for p in range(articulation.num_parts):
        raw = articulation.part_names[p] if p < len(articulation.part_names) else f"part_{p}"
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", raw) or f"part_{p}"
        names.append(name if name not in names else f"{name}_{p}")
    return names


def _frame_origins(articulation: Articulation) -> tuple[np.ndarray, list[int]]:
    """Link frame origins (P, 3) in the mesh frame and each part's parent part (-1 for the root);
    ValueError unless the joints form a tree over the parts rooted at part 0."""
    P = articulation.num_parts
    origins, parents = np.zeros((P, 3)), [-1] + [0] * (P - 1)  # parts without a joint are welded to the root
    children = [j.child for j in articulation.joints]
    for joint in articulation.joints:
        if not (1 <= joint.child < P and 0 <= joint.parent < P) or joint.parent == joint.child:
            raise ValueError(f"joint {joint.name!r}: parent {joint.parent} / child {joint.child} are not two of "
                             f"the {P} parts (the root 0 cannot be a child)")
        if children.count(joint.child) > 1:
            raise ValueError(f"part {joint.child} is the child of {children.count(joint.child)} joints")
        origins[joint.child], parents[joint.child] = joint.origin, joint.parent
    for part in range(P):
        seen, p = set(), part
        while p > 0:
            if p in seen:
                raise ValueError(f"the joints form a cycle through part {p}")
            seen.add(p)
            p = parents[p]
    return origins, parents


def _mujoco_geometry(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The mesh file content for a piece (k, 3), (f, 3): the piece itself; for a flat piece (MuJoCo
    rejects coplanar meshes) plus a reversed copy FLAT_BACKING of its size behind it; None if it has no area."""
    if len(faces) == 0 or len(vertices) < 3:
        return None
    _, sizes, directions = np.linalg.svd(vertices - vertices.mean(0), full_matrices=False)
    if sizes[1] <= 1e-9 * sizes[0]:
        return None
    if sizes[2] > 1e-7 * sizes[0]:
        return vertices, faces
    offset = FLAT_BACKING * np.ptp(vertices, axis=0).max() * directions[2]
    return np.vstack([vertices, vertices - offset]), np.vstack([faces, faces[:, ::-1] + len(vertices)])


def _write_obj(path: Path, vertices: np.ndarray, faces: np.ndarray) -> None:
    lines = [f"v {x:.17g} {y:.17g} {z:.17g}" for x, y, z in vertices]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")


def _vec(v) -> str:
    return " ".join(f"{float(x):.17g}" for x in v)


def write_urdf(path: str | Path, vertices: np.ndarray, faces: np.ndarray, articulation: Articulation,
               density: float = DENSITY, surface_density: float | None = None, name: str = "object",
               effort: float = EFFORT, velocity: float = VELOCITY, file_uris: bool = False) -> Path:
    """Write `path` (.urdf) and its link meshes in `<stem>_meshes/`; returns the URDF path.

    vertices (n, 3) metres and faces (m, 3) int: the input mesh in its own frame; articulation.labels
    (n,) give each vertex's part (faces go to their majority label). density kg/m^3 for closed pieces,
    surface_density kg/m^2 (default density * SHELL_THICKNESS) for open ones; effort (N m or N) and
    velocity (rad/s or m/s) fill every joint's <limit>; file_uris: reference the meshes by absolute
    file:// URIs (for a URDF sent as text, e.g. on a ROS description topic) instead of relative
    filenames. See the module docstring for the frames.
    """
    path = Path(path)
    vertices, faces = np.asarray(vertices, np.float64).reshape(-1, 3), np.asarray(faces, np.int64).reshape(-1, 3)
    labels = articulation.labels
    if len(labels) != len(vertices):
        raise ValueError(f"{len(labels)} part labels for {len(vertices)} vertices")
    origins, parents = _frame_origins(articulation)
    links = _link_names(articulation)
    mesh_dir = path.parent / f"{path.stem}_meshes"
    mesh_dir.mkdir(parents=True, exist_ok=True)
    owner = face_labels(faces, labels)
    compiler = " ".join(f"{k}={quoteattr(v)}" for k, v in MUJOCO_COMPILER.items())
    xml = ['<?xml version="1.0"?>', f"<robot name={quoteattr(name)}>",
           f"  <mujoco><compiler {compiler}/></mujoco>"]
    for part, link in enumerate(links):
        piece = faces[owner == part]
        used, local = np.unique(piece, return_inverse=True)
        local_vertices, local_faces = vertices[used] - origins[part], local.reshape(-1, 3)
        mass, centre, inertia, _ = mass_properties(local_vertices, local_faces, density, surface_density)
        moments = " ".join(f'{k}="{v:.17g}"' for k, v in zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
                                                              inertia[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]))
        xml += [f"  <link name={quoteattr(link)}>", "    <inertial>",
                f'      <origin xyz="{_vec(centre)}" rpy="0 0 0"/>', f'      <mass value="{mass:.17g}"/>',
                f"      <inertia {moments}/>", "    </inertial>"]
        geometry = _mujoco_geometry(local_vertices, local_faces)
        if geometry is not None:
            mesh_file = mesh_dir / f"{link}.obj"
            _write_obj(mesh_file, *geometry)
            where = mesh_file.resolve().as_uri() if file_uris else f"{mesh_dir.name}/{mesh_file.name}"
            geometry = f"<geometry><mesh filename={quoteattr(where)}/></geometry>"
            xml += [f"    <{tag}>{geometry}</{tag}>" for tag in ("visual", "collision")]
        xml.append("  </link>")
    for part in range(1, len(links)):
        joint = articulation.joint_of_child(part)
        offset = _vec(origins[part] - origins[parents[part]])
        if joint is None:
            xml += [f"  <joint name={quoteattr(links[part] + '_fixed')} type=\"fixed\">",
                    f"    <parent link={quoteattr(links[0])}/><child link={quoteattr(links[part])}/>",
                    f'    <origin xyz="{offset}" rpy="0 0 0"/>', "  </joint>"]
            continue
        limited = np.isfinite([joint.lower, joint.upper]).all()
        kind = joint.type if limited or joint.type == "prismatic" else "continuous"
        if not limited and kind == "prismatic":
            raise ValueError(f"prismatic joint {joint.name!r} needs finite limits")
        bounds = f'lower="{joint.lower:.17g}" upper="{joint.upper:.17g}" ' if limited else ""
        xml += [f"  <joint name={quoteattr(joint.name)} type=\"{kind}\">",
                f"    <parent link={quoteattr(links[parents[part]])}/><child link={quoteattr(links[part])}/>",
                f'    <origin xyz="{offset}" rpy="0 0 0"/>', f'    <axis xyz="{_vec(joint.axis)}"/>',
                f'    <limit {bounds}effort="{effort:.17g}" velocity="{velocity:.17g}"/>', "  </joint>"]
    xml.append("</robot>")
    path.write_text("\n".join(xml) + "\n")
    return path


def read_urdf_joints(path: str | Path) -> list[dict]:
    """The joints of a URDF file via yourdfpy: name, type, parent, child (link names), origin (4, 4),
    axis (3,), lower, upper, effort, velocity (None where absent)."""
    import yourdfpy

    robot = yourdfpy.URDF.load(str(path), load_meshes=False, build_scene_graph=False,
                               build_collision_scene_graph=False, load_collision_meshes=False)
    out = []
    for j in robot.robot.joints:
        lim = j.limit
        out.append({"name": j.name, "type": j.type, "parent": j.parent, "child": j.child,
                    "origin": np.eye(4) if j.origin is None else np.asarray(j.origin, float),
                    "axis": None if j.axis is None else np.asarray(j.axis, float),
                    **{k: None if lim is None else getattr(lim, k) for k in ("lower", "upper", "effort", "velocity")}})
    return out
