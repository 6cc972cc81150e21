"""Convert one MuJoCo XML (MJCF) or URDF that MuJoCo compiles into an articulated 4D Instance.

Frame and units: the model's world frame (the asset's own frame), metres, radians.
Geometry: the visual geoms (group 1, or contype = conaffinity = 0), else every geom; planes,
height fields and fully transparent geoms are left out. Mesh geoms keep MuJoCo's compiled vertex
topology (no welding); primitives are meshed with trimesh.creation.
Parts: part 0 = everything not moved by a hinge/slide joint; one more part per body carrying a
hinge/slide joint (several joints on one body share its part); bodies without such a joint join
their parent's part. Free joints leave their body in the root (kept at its rest pose) and ball joints
are never moved, so their bodies join their parent's part.
Poses: MuJoCo forward kinematics (mj_kinematics) at qpos0 + joint values; qpos0 is the rest pose and
joint value 0. A joint's range is its jnt_range relative to qpos0 whenever the range is set (even
with limited="false"); unset ranges default to DEFAULT_RANGES.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from neurok_ros.data.instance_format import Instance
from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry import dual_quaternion as dq

DEFAULT_RANGES = {"revolute": (-np.pi, np.pi), "prismatic": (-0.1, 0.1)}  # radians, metres
FRAME_STEP = 0.1  # seconds between frames
NON_MJCF_ELEMENTS = ("region",)  # LIBERO's own annotations inside MJCF bodies


def _absolute(base: Path, value: str | None) -> str:
    return str((base / (value or "")).resolve())


def prepared_xml(path: str | Path) -> str:
    """The asset's XML made loadable from a string: asset folders made absolute; for MJCF textures
    dropped (only geometry is used; LIBERO's stoves repeat texture names), LIBERO's <region> elements
    dropped, and inertia taken from all geom groups (as when robosuite merges the object into a
    scene); for URDF visual geoms and static bodies kept."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise NeurokInputError(f"{path}: not readable XML ({exc})") from exc
    base = path.parent
    if root.tag == "robot":
        extension = root.find("mujoco")
        if extension is None:
            extension = ET.SubElement(root, "mujoco")
        compiler = extension.find("compiler")
        if compiler is None:
            compiler = ET.SubElement(extension, "compiler")
        compiler.set("meshdir", _absolute(base, compiler.get("meshdir")))
        compiler.attrib.update(strippath="false", discardvisual="false", fusestatic="false")
        return ET.tostring(root, encoding="unicode")
    if root.tag != "mujoco":
        raise NeurokInputError(f"{path}: root element <{root.tag}> is neither <mujoco> nor <robot>")
    if root.find("compiler") is None:
        root.insert(0, ET.Element("compiler"))
    for compiler in root.iter("compiler"):
        asset_dir = compiler.get("assetdir")
        for key in ("meshdir", "texturedir"):
            compiler.set(key, _absolute(base, compiler.get(key, asset_dir)))
        compiler.attrib.pop("assetdir", None)
        compiler.set("inertiagrouprange", "0 5")
    for include in root.iter("include"):
        include.set("file", _absolute(base, include.get("file")))
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag == "texture" or child.tag in NON_MJCF_ELEMENTS:
                parent.remove(child)
        if parent.tag == "material":
            parent.attrib.pop("texture", None)
    return ET.tostring(root, encoding="unicode")


def load_model(path: str | Path):
    """Compile an MJCF or URDF file into a mujoco.MjModel; NeurokInputError when MuJoCo refuses it."""
    import mujoco

    try:
        return mujoco.MjModel.from_xml_string(prepared_xml(path))
    except ValueError as exc:
        raise NeurokInputError(f"{path}: MuJoCo cannot compile it ({str(exc).splitlines()[0]})") from exc


def moving_joints(model) -> list[int]:
    """Ids of the hinge and slide joints, in model order (parents before children)."""
    import mujoco

    kinds = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    return [j for j in range(model.njnt) if int(model.jnt_type[j]) in kinds]


def body_parts(model, joints: list[int]) -> tuple[np.ndarray, list[int]]:
    """Part of every body (nbody,) int and the body defining each part (part 0: the world body)."""
    jointed = {int(model.jnt_bodyid[j]) for j in joints}
    part_of = np.zeros(model.nbody, int)
    part_bodies = [0]
    for body in range(1, model.nbody):  # MuJoCo orders bodies parents first
        if body in jointed:
            part_of[body] = len(part_bodies)
            part_bodies.append(body)
        else:
            part_of[body] = part_of[model.body_parentid[body]]
    return part_of, part_bodies


def _geom_is_visual(model, g: int) -> bool:
    return model.geom_group[g] == 1 or (model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0)


def _geom_is_drawable(model, g: int) -> bool:
    import mujoco

    hidden = (mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_HFIELD, mujoco.mjtGeom.mjGEOM_SDF)
    if int(model.geom_type[g]) in hidden:
        return False
    material = model.geom_matid[g]
    alpha = model.mat_rgba[material][3] if material >= 0 else model.geom_rgba[g][3]
    return alpha > 0


def geom_local_mesh(model, g: int) -> tuple[np.ndarray, np.ndarray]:
    """Mesh of geom g in its own frame: vertices (v, 3) metres, faces (f, 3)."""
    import mujoco
    import trimesh.creation as tc

    kind, size = model.geom_type[g], model.geom_size[g]
    if kind == mujoco.mjtGeom.mjGEOM_MESH:
        m = model.geom_dataid[g]
        v0, nv = model.mesh_vertadr[m], model.mesh_vertnum[m]
        f0, nf = model.mesh_faceadr[m], model.mesh_facenum[m]
        return np.array(model.mesh_vert[v0:v0 + nv], float), np.array(model.mesh_face[f0:f0 + nf], np.int64)
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        mesh = tc.box(extents=2 * size)
    elif kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
        mesh = tc.cylinder(radius=size[0], height=2 * size[1], sections=24)
    elif kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
        mesh = tc.capsule(height=2 * size[1], radius=size[0], count=[16, 16])
    elif kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        mesh = tc.icosphere(subdivisions=2, radius=size[0])
    elif kind == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        mesh = tc.icosphere(subdivisions=2)
        return np.asarray(mesh.vertices) * size, np.asarray(mesh.faces, np.int64)
    else:
        raise NeurokInputError(f"geom {g}: type {int(kind)} cannot be meshed")
    return np.asarray(mesh.vertices, float), np.asarray(mesh.faces, np.int64)


def rest_mesh(model, data, part_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merged geometry at the pose in `data`: vertices (n, 3), faces (F, 3), part_ids (n,)."""
    drawable = [g for g in range(model.ngeom) if _geom_is_drawable(model, g)]
    visual = [g for g in drawable if _geom_is_visual(model, g)]
    vertices, faces, parts, count = [], [], [], 0
    for g in visual or drawable:
        v, f = geom_local_mesh(model, g)
        vertices.append(v @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g])
        faces.append(f + count)
        parts.append(np.full(len(v), part_of[model.geom_bodyid[g]]))
        count += len(v)
    if not count:
        raise NeurokInputError("the model has no geometry to mesh")
    return np.concatenate(vertices), np.concatenate(faces), np.concatenate(parts)


def sweep(ranges: np.ndarray, frames_per_joint: int, num_frames: int | None = None) -> np.ndarray:
    """Joint values (T, J): 0 (rest), then each joint alone through `frames_per_joint` values across
    its range (others 0), then all joints together at evenly spaced fractions of their ranges, so that
    there are `num_frames` frames (default: frames_per_joint of them)."""
    J = len(ranges)
    alone = 1 + frames_per_joint * J
    total = alone + frames_per_joint if num_frames is None else num_frames
    if total < alone + 1:
        raise NeurokInputError(f"{total} frames cannot hold the rest pose and {J} joint sweeps of "
                               f"{frames_per_joint} frames plus one combined frame")
    q = np.zeros((total, J))
    for j, (lo, hi) in enumerate(ranges):
        q[1 + j * frames_per_joint: 1 + (j + 1) * frames_per_joint, j] = np.linspace(lo, hi, frames_per_joint)
    together = total - alone
    fractions = np.arange(1, together + 1) / together
    q[alone:] = ranges[:, 0] + fractions[:, None] * (ranges[:, 1] - ranges[:, 0])
    return q


def part_motions(model, data, qpos_adr: list[int], values: np.ndarray, part_bodies: list[int]):
    """World poses of the part bodies for joint values (T, J) added to qpos0: R (T, P, 3, 3), t (T, P, 3)."""
    import mujoco

    T = len(values)
    R = np.empty((T, len(part_bodies), 3, 3))
    t = np.empty((T, len(part_bodies), 3))
    for i, q in enumerate(values):
        data.qpos[:] = model.qpos0
        data.qpos[qpos_adr] += q
        mujoco.mj_kinematics(model, data)
        R[i] = data.xmat[part_bodies].reshape(-1, 3, 3)
        t[i] = data.xpos[part_bodies]
    return R, t


def joint_records(model, data, joints: list[int], part_of: np.ndarray, ranges: np.ndarray) -> list[dict]:
    """The instance's joint list at the rest pose in `data` (axis unit, pivot metres, object frame)."""
    import mujoco

    records, last_joint_of_body = [], {}
    for k, j in enumerate(joints):
        body = int(model.jnt_bodyid[j])
        parent_joint, ancestor = last_joint_of_body.get(body, -1), body
        while parent_joint < 0 and ancestor > 0:
            ancestor = int(model.body_parentid[ancestor])
            parent_joint = last_joint_of_body.get(ancestor, -1)
        moved = {int(part_of[b]) for b in range(model.nbody) if _in_subtree(model, b, body)}
        axis = np.array(data.xaxis[j], float)
        records.append({
            "name": mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint_{j}",
            "type": "revolute" if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE else "prismatic",
            "axis": [float(x) for x in axis / np.linalg.norm(axis)],
            "pivot": [float(x) for x in data.xanchor[j]],
            "range": [float(x) for x in ranges[k]],
            "parent_part": int(part_of[model.body_parentid[body]]),
            "child_parts": sorted(moved),
            "parent_joint": parent_joint,
        })
        last_joint_of_body[body] = k
    return records


def _in_subtree(model, body: int, root: int) -> bool:
    while body > 0 and body != root:
        body = int(model.body_parentid[body])
    return body == root


def joint_ranges(model, joints: list[int]) -> np.ndarray:
    """(J, 2) ranges relative to qpos0: jnt_range when set, else DEFAULT_RANGES."""
    import mujoco

    ranges = []
    for j in joints:
        lo, hi = model.jnt_range[j]
        if not lo < hi:
            kind = "revolute" if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE else "prismatic"
            lo, hi = DEFAULT_RANGES[kind]
        else:
            lo, hi = np.array([lo, hi]) - model.qpos0[model.jnt_qposadr[j]]
        ranges.append((float(lo), float(hi)))
    return np.array(ranges, float).reshape(-1, 2)


def count_moving_joints(path: str | Path) -> int:
    """Hinge and slide joints of an asset (compiles it)."""
    return len(moving_joints(load_model(path)))


def convert_asset(path: str | Path, category: str, generator: dict, frames_per_joint: int = 8,
                  num_frames: int | None = None) -> Instance:
    """One asset file -> articulated Instance (see the module docstring and `sweep` for the frames)."""
    import mujoco

    model = load_model(path)
    data = mujoco.MjData(model)
    joints = moving_joints(model)
    if not joints:
        raise NeurokInputError(f"{path}: no hinge or slide joint")
    part_of, part_bodies = body_parts(model, joints)
    ranges = joint_ranges(model, joints)
    values = sweep(ranges, frames_per_joint, num_frames)
    R, t = part_motions(model, data, [int(model.jnt_qposadr[j]) for j in joints], values, part_bodies)
    data.qpos[:] = model.qpos0
    mujoco.mj_kinematics(model, data)
    rest, faces, part_ids = rest_mesh(model, data, part_of)
    records = joint_records(model, data, joints, part_of, ranges)
    R_rel = R @ np.swapaxes(R[:1], -1, -2)  # pose_t * pose_rest^-1 per part
    t_rel = t - np.einsum("tpab,pb->tpa", R_rel, t[0])
    frames = np.einsum("tnab,nb->tna", R_rel[:, part_ids], rest) + t_rel[:, part_ids]
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or f"body_{b}" for b in part_bodies]
    info = {"version": "1", "seed": 0, **generator,
            "params": {"part_names": names, "frames_per_joint": frames_per_joint, **generator.get("params", {})}}
    return Instance(
        category=category,
        kind="articulated",
        rest_vertices=rest,
        faces=faces,
        frames=frames,
        times=np.arange(len(values)) * FRAME_STEP,
        vertex_dual_quaternions=dq.from_rotation_translation(R_rel, t_rel)[:, part_ids],
        part_ids=part_ids,
        joint_values=values,
        joints=records,
        generator=info,
    )
