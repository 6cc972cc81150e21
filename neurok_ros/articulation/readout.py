"""Articulation readout: the parts and joints of one static mesh (docs/articulation.md).

    articulation = articulate(model, vertices, faces)       # encodes, then reads out
    articulation = read_articulation(instance)              # from a NeuROKInstance

1. Motion evidence: the mesh's surface samples under the learned space's motions (motion_evidence).
2. Rigid parts: sequential rigid consensus over those motions (segment_rigid), carried to the
   vertices through the mesh's welded pieces: a piece whose samples mostly agree takes their part
   whole (CAD furniture, procedural objects), a piece the motions split (a single-surface scan)
   keeps each vertex's nearest samples' part.
3. The tree: parts that move together (relative to the root, or to a part they touch) merge; of
   the large parts, the one that moves least is the root; every other part hangs from the touching
   part relative to which one joint explains most motions (the root when it explains nearly as many).
4. Joints: a revolute or prismatic fit of each child's motion relative to its parent (joint_fit);
   the limits span the joint values the motions reach, the input pose being 0. An axis within
   `snap_degrees` of a principal direction of the child, the parent or the whole object is snapped
   to it (manufactured objects hinge and slide along their own edges).
   With an articulation head and a mesh of several welded pieces, the head's per-point votes pooled
   over the pieces give parts and joints (head_tree, the limits from the learned motions), and each
   part that steps 2-4 find but the head leaves on its base joins them with its joint (`joined`: a
   drawer the head calls still). The head's pieces pool per glued assembly where one touches the
   rest only across a clearance (head_readout.loose_assemblies: a drawer's panels move together).
   A hinge on its parent's hinge line hangs from the grandparent when the parent is about as large
   (off_one_line: two stacked fridge doors both hang from the body).
5. Serial chains: an object whose large pieces form one path joined end to end by round contacts
   (a robot arm) is read from those contacts instead, a revolute joint about each (serial_chains).
6. Rail slides: a piece that a long straight bar runs through, reaching beyond it both ways,
   slides along the bar with what it carries, the bar being the fixed side; a bar hung from it at
   one end swings in its plane of travel (rail_slides: a cart on its track and its pole).
7. Knobs: a small solid of revolution mounted along its axis on a broader surface turns about that
   axis (knob_joints: an oven's knobs, which both readouts leave still, a dial read across).
8. Lever handles: a round rosette flat on a broader surface, with an arm that leaves it, becomes a
   part of that surface's part turning about the rosette's axis (lever_handles: a door's levers).
9. Handled parts: a box or a slab a pull handle is mounted on, that no moving part holds, slides
   out along the handle's face normal (a drawer) or swings about the face's far edge (a door)
   (handled_parts: LIBERO's drawers, which sit on their shelves with no clearance).
10. Mirror twins: on a mirror- or half-turn-symmetric object, a moving part whose twin the
   readouts left still, or mixed into it, gets its twin back with the mirrored joint (mirror_twins:
   a gripper's two fingers).
11. Swivel mounts: a squat round piece of the base that a moving part is mounted on, across its
   axis, turns with that part about its own axis (swivel_mounts: a faucet's cartridge cap).
12. Hubs: a revolute part whose contact with its parent a squat round piece of it bears (a lever's
   hub, a cap, a knuckle, a dial) turns about that piece's axis (hub_axes).
13. Slide guides: a slide that runs into the rest of the object at once, both ways, turns along
   the nearest free principal direction, or the one its guide bounds both ways (slide_guides: a
   sash read sideways slides up its track).
14. Contact limits: where the moving part first runs into the rest of the object, its limit that
   way is set there (contact_limits: a lid stops on its base, a drawer at the cabinet's back).
15. Kind: one open thin sheet is "cloth" and gets no joints (it folds anywhere); otherwise
   "articulated" with joints, "cloth" for a thin sheet without, "soft" for the rest.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from neurok_ros.articulation.articulation import Articulation, Joint
from neurok_ros.articulation.contact_limits import contact_limits
from neurok_ros.articulation.handled_parts import handled_parts
from neurok_ros.articulation.head_readout import principal_directions
from neurok_ros.articulation.hub_axes import hub_axes
from neurok_ros.articulation.joint_fit import JointFit, fit_joint
from neurok_ros.articulation.knob_joints import knob_joints
from neurok_ros.articulation.lever_handles import lever_handles
from neurok_ros.articulation.mirror_twins import mirror_twins
from neurok_ros.articulation.motion_evidence import MotionEvidence, motion_evidence
from neurok_ros.articulation.pivot_placement import place_pivots
from neurok_ros.articulation.rail_slides import rail_slides
from neurok_ros.articulation.rigid_segmentation import kabsch, segment_rigid
from neurok_ros.articulation.serial_chains import serial_chain
from neurok_ros.articulation.slide_guides import slide_guides
from neurok_ros.articulation.swivel_mounts import swivel_mounts

MIN_FACES = 4


@dataclass(frozen=True)
class ReadoutConfig:
    """points / motions: surface samples and learned motions decoded; tolerance: rigid consensus
    (normalised units, longest side 1); max_parts: most parts; min_part_fraction: the smallest part,
    a fraction of the samples; piece_majority: the share of a welded piece's samples that makes the
    whole piece their part; min_joint_motion / together: a part merges into a part relative to
    which it moves less than min_joint_motion (RMS, normalised) or `together` times its own motion;
    root_preference: a non-root parent must explain this much larger a fraction of the motions than
    the root; snap_degrees: axis snapping (0: off), and the angle within which two touching
    siblings' joints are one; head_snap_degrees: axis snapping of the articulation head's joints,
    whose votes scatter more (16 degrees per point on val); same_line: the distance (normalised)
    within which their axis lines are one; adjacency: the gap (normalised) within which two parts
    touch; glued: the gap within which two welded pieces are glued into one body (the head's
    slides); hinge_contact: the gap within which two pieces that vote for one hinge line are one part
    (a screen in its lid; two doors stacked on one hinge line a few millimetres apart stay two);
    thin_sheet: smallest / largest principal extent of a cloth; chains: read an object whose large
    pieces form one chain of round contacts as a serial chain (serial_chains); rails: slide the
    carriages that a straight bar runs through along it (rail_slides); knobs: read small solids of
    revolution mounted along their axis as knobs (knob_joints); levers: make a round rosette with an
    arm that leaves it a handle part of the surface it sits on (lever_handles); handles: make a box or slab
    a pull handle is mounted on a drawer or a door (handled_parts); mirrors: give a one-sided moving
    part of a symmetric object its twin (mirror_twins); swivels: turn the round
    piece of the base that a moving part is mounted on with it (swivel_mounts); hubs: turn revolute
    parts about the round piece that bears their contact (hub_axes); guides: turn a slide that runs
    into the rest of the object at once along the way its guide lets it (slide_guides); panel_degrees:
    axes within this many degrees of a normal of the flat panels of the child, the parent or the object
    snap to it before the principal directions are tried (snap_axis; 0: off)."""

    points: int = 2048
    motions: int = 48
    tolerance: float = 0.03
    max_parts: int = 10
    min_joint_motion: float = 0.03
    together: float = 0.15
    root_preference: float = 0.1
    snap_degrees: float = 10.0
    head_snap_degrees: float = 45.0
    adjacency: float = 0.02
    glued: float = 1e-4
    hinge_contact: float = 0.001
    still_share: float = 0.2
    pivot_gap: float = 0.02
    same_line: float = 0.05
    min_part_fraction: float = 0.005
    piece_majority: float = 0.85
    thin_sheet: float = 0.03
    chains: bool = True
    rails: bool = True
    knobs: bool = True
    levers: bool = True
    handles: bool = True
    mirrors: bool = True
    swivels: bool = True
    hubs: bool = True
    guides: bool = True
    panel_degrees: float = 10.0
    seed: int = 0


def articulate(model, vertices, faces, config: ReadoutConfig = ReadoutConfig(), head="auto") -> Articulation:
    """The articulation of a mesh (vertices (n, 3) any frame and units, faces (m, 3)); MeshError for
    an unusable mesh. head: as read_articulation's."""
    from neurok_ros.errors import MeshError
    from neurok_ros.geometry.mesh_cleaning import validate_mesh_arrays
    from neurok_ros.kinematics.instance import encode_mesh

    started = time.perf_counter()
    vertices, faces = validate_mesh_arrays(vertices, faces)
    if len(faces) < MIN_FACES:
        raise MeshError(f"{len(faces)} faces: too few to read parts and joints from (at least {MIN_FACES})")
    instance = encode_mesh(model, vertices, faces)
    articulation = read_articulation(instance, config, head)
    articulation.seconds = time.perf_counter() - started
    return articulation


def read_articulation(instance, config: ReadoutConfig = ReadoutConfig(), head="auto") -> Articulation:
    """The articulation of an encoded mesh (a NeuROKInstance); see the module docstring. head: an
    ArticulationHead (model/articulation_head.py), whose votes give the parts and joints, the
    learned motions adding the parts it leaves on the base (joined); "auto": the head trained on
    the instance's model, if it has one (the shipped model does); None: the learned motions alone."""
    from neurok_ros.model.articulation_head import model_head

    started = time.perf_counter()
    head = model_head(instance.model) if isinstance(head, str) else head
    V, F = instance.vertices, instance.faces
    evidence = motion_evidence(instance, config.points, config.motions, config.seed)
    normalised = instance.transform.apply(V)
    sample_parts = segment_rigid(evidence.rest, evidence.moved, config.tolerance, config.min_part_fraction,
                                 config.max_parts, seed=config.seed)
    labels = vertex_parts(normalised, F, evidence, sample_parts, config.piece_majority)
    panels = Panels.of(V, F, config.panel_degrees) if config.panel_degrees > 0 else None
    labels, joints = mesh_joints(V, instance.transform, *build_tree(labels, normalised, F, evidence, config),
                                 config.snap_degrees, panels)
    if head is not None and len(np.unique(evidence.pieces)) > 1:
        head_labels, head_joints = mesh_joints(V, instance.transform,
                                               *head_tree(instance, head, normalised, F, evidence, config),
                                               config.head_snap_degrees, panels)
        labels, joints = joined(head_labels, head_joints, labels, joints, config.still_share)
    if is_cloth(V, F, evidence.pieces, config.thin_sheet):
        labels, joints = np.zeros_like(labels), []  # a sheet folds anywhere: no rigid parts to read
    kind = "articulated" if joints else ("cloth" if is_thin_sheet(V, config.thin_sheet) else "soft")
    articulation = Articulation(labels, joints, kind)
    if joints and config.pivot_gap > 0:
        place_pivots(V, F, articulation, config.pivot_gap / instance.transform.scale, config.seed)
    if joints:
        articulation.joints = off_one_line(articulation.joints, part_areas(V, F, articulation.labels),
                                           config.snap_degrees, config.same_line / instance.transform.scale)
    if kind != "cloth" and config.chains:
        chain = serial_chain(V, F, evidence.pieces)
        if chain is not None:
            articulation = Articulation(*chain, "articulated")
    if kind != "cloth" and config.rails:
        labels, joints = rail_slides(V, F, evidence.pieces, articulation.labels, articulation.joints)
        articulation = Articulation(labels, joints, "articulated" if joints else articulation.kind)
    if kind != "cloth" and config.knobs:
        labels, joints = knob_joints(V, F, evidence.pieces, articulation.labels, articulation.joints)
        articulation = Articulation(labels, joints, "articulated" if joints else kind)
    if kind != "cloth" and config.levers:
        labels, joints = lever_handles(V, F, evidence.pieces, articulation.labels, articulation.joints)
        articulation = Articulation(labels, joints, "articulated" if joints else articulation.kind)
    if kind != "cloth" and config.handles:
        labels, joints = handled_parts(V, F, evidence.pieces, articulation.labels, articulation.joints)
        articulation = Articulation(labels, joints, "articulated" if joints else articulation.kind)
    if articulation.joints and config.mirrors:
        articulation = Articulation(*mirror_twins(V, F, evidence.pieces, articulation.labels, articulation.joints),
                                    articulation.kind)
    if articulation.joints and config.swivels:
        articulation = Articulation(*swivel_mounts(V, F, evidence.pieces, articulation.labels, articulation.joints),
                                    articulation.kind)
    if articulation.joints and config.hubs:
        articulation.joints = hub_axes(V, F, evidence.pieces, articulation.labels, articulation.joints)
    if articulation.joints and config.guides:
        slide_guides(V, F, articulation, seed=config.seed)
    if articulation.joints:
        contact_limits(V, F, articulation, config.seed)
    articulation.seconds = time.perf_counter() - started
    return articulation


def off_one_line(joints: list[Joint], areas: np.ndarray, degrees: float, gap: float,
                 comparable: float = 1 / 3) -> list[Joint]:
    """The joints with every hinge that turns about the same line as its parent's hinge (axes within
    `degrees`, its origin within `gap`, mesh units, of the parent's line) hung from the grandparent,
    when the parent is a part of comparable size (areas (P,) per part label: at least `comparable`
    times the child's): two doors stacked on one hinge line both hang from the cabinet, and a push
    on one leaves the other where it is; a lamp's arm stays on the small knuckle it turns on. On one
    line the two hinges reach the same poses either way."""
    from neurok_ros.articulation.head_readout import line_distances

    of_child = {j.child: j for j in joints}
    out = []
    for joint in joints:
        above = of_child.get(joint.parent)
        while (above is not None and joint.type == above.type == "revolute"
               and areas[above.child] >= comparable * areas[joint.child]
               and abs(joint.axis @ above.axis) >= np.cos(np.radians(degrees))
               and line_distances(joint.origin[None], above.origin, above.axis)[0] <= gap):
            joint = replace(joint, parent=above.parent)
            above = of_child.get(joint.parent)
        out.append(joint)
    return out


def part_areas(vertices: np.ndarray, faces: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(P,) surface area of each part label (mesh units squared), each face counted for its part."""
    from neurok_ros.articulation.urdf import face_labels
    from neurok_ros.geometry.mesh_cleaning import face_double_areas

    return np.bincount(face_labels(faces, labels), weights=face_double_areas(vertices, faces) / 2,
                       minlength=int(labels.max()) + 1)


def mesh_joints(vertices: np.ndarray, transform, labels: np.ndarray, parents: dict, fits: dict,
                snap: float, panels: Panels | None = None) -> tuple[np.ndarray, list[Joint]]:
    """labels and the Joints (input mesh frame and units) of a tree read in the normalised frame,
    axes snapped within `snap` degrees (snap_axis; 0: not), first to panel directions where given."""
    joints = [joint_in_mesh_frame(f"joint_{child}", fits[child], parents[child], child, transform)
              for child in range(1, labels.max() + 1)]
    if snap > 0:
        joints = [snap_axis(joint, vertices, labels, snap, panels) for joint in joints]
    return labels, joints


def joined(labels: np.ndarray, joints: list[Joint], other_labels: np.ndarray, other_joints: list[Joint],
           still_share: float) -> tuple[np.ndarray, list[Joint]]:
    """The first readout's parts and joints, plus each part of the other readout that the first leaves
    on its base (less than `still_share` of its vertices in a moving part): its base vertices become a
    new part with its joint, hung from the part that holds most of its old parent's vertices, or from
    the base where its old parent was the base. Joints stay parents first."""
    labels, joints = labels.copy(), list(joints)
    for joint in other_joints:
        child = other_labels == joint.child
        if not child.any() or (labels[child] != 0).mean() >= still_share:
            continue
        part = int(labels.max()) + 1
        holder = (other_labels == joint.parent) & ~child
        labels[child & (labels == 0)] = part
        parent = int(np.bincount(labels[holder]).argmax()) if holder.any() and joint.parent != 0 else 0
        joints.append(Joint(f"joint_{part}", joint.type, joint.axis, joint.origin, joint.lower, joint.upper,
                            parent, part, joint.confidence))
    return labels, joints


def head_tree(instance, head, normalised: np.ndarray, faces: np.ndarray, evidence: MotionEvidence,
              config: ReadoutConfig):
    """Labels (n,), parents and fits (JointFit per child, normalised frame) from the head's votes on a
    mesh of several welded pieces: the votes pooled per piece give the child parts (piece_parts),
    carried to the vertices; each child hangs from the part it touches nearest its axis; limits span
    the values of the learned motions that the joint explains."""
    import torch

    from neurok_ros.articulation.head_readout import piece_gaps, piece_parts

    with torch.no_grad():
        points = torch.as_tensor(evidence.rest, dtype=instance.shape_tokens.dtype, device=instance.device)
        out = head(instance.shape_tokens, points[None])
        probabilities = torch.softmax(out.logits[0], -1).double().cpu().numpy()
        axes, offsets = out.axis[0].double().cpu().numpy(), out.offset[0].double().cpu().numpy()
    pieces = evidence.pieces[faces[evidence.samples.face_ids, 0]]
    probes, probe_pieces = gap_probes(normalised, evidence.pieces, evidence.rest, pieces)
    gaps = piece_gaps(normalised, faces, evidence.pieces[faces[:, 0]], probes, probe_pieces)
    sample_groups, votes = piece_parts(evidence.rest, probabilities, axes, offsets, pieces,
                                       gaps < config.adjacency, gaps < config.glued, gaps < config.hinge_contact)
    labels = vertex_parts(normalised, faces, evidence, sample_groups, config.piece_majority)
    kept = np.unique(labels)
    labels = np.searchsorted(kept, labels).astype(np.int64)
    votes = [votes[g - 1] for g in kept if g > 0]
    labels, votes = merge_agreeing(labels, votes, normalised, config.hinge_contact)
    sample_labels = labels[faces[evidence.samples.face_ids, 0]]
    P = int(labels.max()) + 1
    R, t, points_of = part_motions(sample_labels, evidence, P)
    parents, fits = {}, {}
    for child in range(1, P):
        vote = votes[child - 1]
        parents[child] = touching_parent(child, sample_labels, evidence.rest, vote, config.adjacency)
        fits[child] = vote_fit(vote, *relative_motion(R, t, parents[child], child), points_of[child],
                               config.tolerance)
    return renumber(labels, without_cycles(parents, 0), fits, 0)


def gap_probes(normalised: np.ndarray, vertex_pieces: np.ndarray, rest: np.ndarray, pieces: np.ndarray,
               few: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Points (M', 3) and their pieces (M',) to measure the gaps between welded pieces from: the
    surface samples rest (M, 3) with pieces (M,), and the vertices (normalised (n, 3), vertex_pieces
    (n,)) of every piece with fewer than `few` samples. A handle's few samples may all miss the face
    it is glued on; its corners do not."""
    counts = np.bincount(pieces, minlength=int(vertex_pieces.max()) + 1)
    small = counts[vertex_pieces] < few
    return np.concatenate([rest, normalised[small]]), np.concatenate([pieces, vertex_pieces[small]])


def merge_agreeing(labels: np.ndarray, votes: list, normalised: np.ndarray, gap: float,
                   angle: float = 15.0, line_gap: float = 0.05) -> tuple[np.ndarray, list]:
    """Child parts that touch and vote for the same joint (type, axis within `angle` degrees, lines
    within `line_gap`) become one part: a door the welded pieces or the votes cut in two."""
    from neurok_ros.articulation.head_readout import line_distances

    while len(votes) > 1:
        near = adjacency(labels, normalised, gap)
        pair = next(((a, b) for a in range(1, len(votes) + 1) for b in range(a + 1, len(votes) + 1)
                     if near[a, b] and agree(votes[a - 1], votes[b - 1], angle, line_gap, line_distances)), None)
        if pair is None:
            break
        a, b = pair
        labels = np.where(labels == b, a, np.where(labels > b, labels - 1, labels))
        votes = votes[:b - 1] + votes[b:]
    return labels, votes


def agree(first, second, angle: float, line_gap: float, line_distances) -> bool:
    """Whether two joint votes name the same joint."""
    if first.type != second.type or abs(first.axis @ second.axis) < np.cos(np.radians(angle)):
        return False
    return first.type == "prismatic" or line_distances(second.origin[None], first.origin, first.axis)[0] < line_gap


def touching_parent(child: int, sample_labels: np.ndarray, rest: np.ndarray, vote, gap: float,
                    base_line: float = 0.01) -> int:
    """The part whose samples within `gap` of the child's come nearest the child's axis line (a
    slide: the part with most such samples); the base when none touches, and whenever the base
    touches it too, within `base_line` as near the line for a hinge: two doors on one hinge line, or
    two sashes on one rail, hang from the frame, not from each other."""
    from scipy.spatial import cKDTree

    from neurok_ros.articulation.head_readout import line_distances

    own = sample_labels == child
    if not own.any():
        return 0
    others = np.flatnonzero(~own)
    touching = others[cKDTree(rest[own]).query(rest[others], distance_upper_bound=gap)[0] < gap]
    if not len(touching):
        return 0
    on_base = sample_labels[touching] == 0
    if vote.type == "revolute":
        distances = line_distances(rest[touching], vote.origin, vote.axis)
        if on_base.any() and distances[on_base].min() <= distances.min() + base_line:
            return 0
        return int(sample_labels[touching[np.argmin(distances)]])
    return 0 if on_base.any() else int(np.bincount(sample_labels[touching]).argmax())


def vote_fit(vote, R: np.ndarray, t: np.ndarray, points: np.ndarray, tolerance: float) -> JointFit:
    """The head's joint as a JointFit, its values those of the learned motions it explains to within
    `tolerance` (relative motions R (E, 3, 3), t (E, 3) of the child's points (M, 3))."""
    from neurok_ros.articulation.joint_fit import model_errors, rotation_vectors

    if len(points) < 3:
        return JointFit(vote.type, vote.axis, vote.origin, np.zeros(1), 0.0, 1.0, vote.confidence)
    explained = model_errors(vote.type, vote.axis, vote.origin, R, t, points) < tolerance
    if vote.type == "revolute":
        values = rotation_vectors(R) @ vote.axis
    else:
        values = (np.einsum("eij,mj->emi", R, points) + t[:, None] - points[None]).mean(1) @ vote.axis
    values = values[explained] if explained.any() else np.zeros(1)
    return JointFit(vote.type, vote.axis, vote.origin, values, 0.0, 1.0, vote.confidence)


def vertex_parts(normalised: np.ndarray, faces: np.ndarray, evidence: MotionEvidence, sample_parts: np.ndarray,
                 majority: float, neighbours: int = 5) -> np.ndarray:
    """(n,) int64 part of each vertex (normalised (n, 3)) from the parts of the surface samples: the
    part most of its nearest samples have, or, for every vertex of a welded piece whose samples mostly
    (`majority`) agree, that part."""
    from scipy.spatial import cKDTree

    pieces = evidence.pieces
    sample_pieces = pieces[faces[evidence.samples.face_ids, 0]]
    k = min(neighbours, len(evidence.rest))
    _, nearest = cKDTree(evidence.rest).query(normalised, k=k)
    nearest = nearest.reshape(len(normalised), k)
    parts_count = int(sample_parts.max()) + 1
    votes = np.zeros((len(normalised), parts_count))
    np.add.at(votes, (np.repeat(np.arange(len(normalised)), k), sample_parts[nearest].ravel()), 1.0)
    labels = np.argmax(votes, axis=1)
    for piece in range(int(pieces.max()) + 1):
        members = pieces == piece
        counts = np.bincount(sample_parts[sample_pieces == piece], minlength=parts_count)
        if counts.sum() == 0:
            counts = votes[members].sum(0)
        if counts.max() >= majority * counts.sum():
            labels[members] = int(np.argmax(counts))
    return labels.astype(np.int64)


def part_motions(labels_of_samples: np.ndarray, evidence: MotionEvidence, parts: int):
    """Each part's best rigid motion per learned motion: R (P, E, 3, 3), t (P, E, 3), and the part's
    sample points (list of (M_p, 3))."""
    E = evidence.num_motions
    R = np.tile(np.eye(3), (parts, E, 1, 1))
    t = np.zeros((parts, E, 3))
    points = []
    for p in range(parts):
        members = labels_of_samples == p
        points.append(evidence.rest[members])
        if members.sum() >= 3:
            R[p], t[p] = kabsch(evidence.rest[members], evidence.moved[:, members])
    return R, t, points


def relative_motion(R: np.ndarray, t: np.ndarray, parent: int, child: int) -> tuple[np.ndarray, np.ndarray]:
    """The child's motions in its parent's frame: R_p^T R_c and R_p^T (t_c - t_p), (E, 3, 3), (E, 3)."""
    Rp_T = np.swapaxes(R[parent], -1, -2)
    return Rp_T @ R[child], np.einsum("eij,ej->ei", Rp_T, t[child] - t[parent])


def relative_extent(R: np.ndarray, t: np.ndarray, points: np.ndarray) -> float:
    """RMS motion of points (M, 3) under the relative motions R (E, 3, 3), t (E, 3) (points' units)."""
    moved = np.einsum("eij,mj->emi", R, points) + t[:, None]
    return float(np.sqrt(np.square(moved - points[None]).sum(-1).mean()))


def adjacency(labels: np.ndarray, normalised: np.ndarray, gap: float) -> np.ndarray:
    """(P, P) bool: parts whose vertices come within `gap` of each other (normalised units)."""
    from scipy.spatial import cKDTree

    P = int(labels.max()) + 1
    trees = [cKDTree(normalised[labels == p]) for p in range(P)]
    near = np.eye(P, dtype=bool)
    for a in range(P):
        for b in range(a + 1, P):
            if trees[a].n and trees[b].n:
                near[a, b] = near[b, a] = bool(trees[a].count_neighbors(trees[b], gap) > 0)
    return near


def choose_root(moves: list[float], sizes: np.ndarray) -> int:
    """The part that moves least among those with at least a third of the largest part's samples."""
    big = [p for p in range(len(sizes)) if sizes[p] >= max(3, sizes.max() / 3)]
    return min(big or range(len(sizes)), key=lambda p: (moves[p], -sizes[p]))


def build_tree(labels: np.ndarray, normalised: np.ndarray, faces: np.ndarray, evidence: MotionEvidence,
               config: ReadoutConfig):
    """Merge the atoms into parts, then pick the root, the parents and the joint fits. Returns labels
    (n,) renumbered (root 0, parents before children), parents {child: parent} and fits
    {child: JointFit} in the normalised frame.

    Merging: a part joins a part (the root, or one it touches) relative to which it moves less than
    min_joint_motion or `together` times its own motion, the most similar pair first; a part with too
    few samples to have a motion joins the part it touches that has the most."""
    labels = np.unique(labels, return_inverse=True)[1].astype(np.int64)
    near = adjacency(labels, normalised, config.adjacency)
    while True:
        P = int(labels.max()) + 1
        sample_labels = labels[faces[evidence.samples.face_ids, 0]]
        R, t, points = part_motions(sample_labels, evidence, P)
        sizes = np.bincount(sample_labels, minlength=P)
        moves = [relative_extent(R[p], t[p], points[p]) if sizes[p] >= 3 else 0.0 for p in range(P)]
        root = choose_root(moves, sizes)
        if P == 1:
            return labels, {}, {}
        merge = None
        tiny = [p for p in range(P) if sizes[p] < 3 and p != root]
        if tiny:
            p = tiny[0]
            hosts = [q for q in range(P) if q != p and near[p, q]] or [root]
            merge = (p, max(hosts, key=lambda q: sizes[q]))
        else:
            best_ratio = None
            for child in range(P):
                if child == root:
                    continue
                for parent in range(P):
                    if parent == child or not (parent == root or near[child, parent]):
                        continue
                    extent = relative_extent(*relative_motion(R, t, parent, child), points[child])
                    if extent < max(config.min_joint_motion, config.together * moves[child]):
                        ratio = extent / max(moves[child], 1e-12)
                        if best_ratio is None or ratio < best_ratio:
                            best_ratio, merge = ratio, (child, parent)
        if merge is None:
            break
        child, parent = merge
        near[parent] |= near[child]
        near[:, parent] |= near[:, child]
        keep = np.arange(P) != child
        near = near[keep][:, keep]
        labels[labels == child] = parent
        labels = np.unique(labels, return_inverse=True)[1].astype(np.int64)
    parents, fits = {}, {}
    for child in range(P):
        if child == root:
            continue
        options = {p: fit_joint(*relative_motion(R, t, p, child), points[child], config.tolerance)
                   for p in range(P) if p != child and (p == root or near[child, p])}
        best = max(options, key=lambda p: (options[p].support, -options[p].residual))
        if options[root].support >= options[best].support - config.root_preference:
            best = root
        parents[child], fits[child] = best, options[best]
    rehung = without_cycles(parents, root)
    for child in rehung:
        if rehung[child] != parents[child]:
            fits[child] = fit_joint(*relative_motion(R, t, root, child), points[child], config.tolerance)
    labels, rehung, fits, root = merge_shared_joints(labels, rehung, fits, root, normalised, config)
    return renumber(labels, rehung, fits, root)


def merge_shared_joints(labels: np.ndarray, parents: dict, fits: dict, root: int, normalised: np.ndarray,
                        config: ReadoutConfig) -> tuple[np.ndarray, dict, dict, int]:
    """Sibling parts that touch and turn on their parent about the same hinge (axes within
    snap_degrees, axis lines within `same_line`) become one part, the larger keeping its fit: a cap or
    a handle the consensus cut in pieces. Parallel slides stay apart (a chest's drawers touch).
    Returns labels (compact), parents, fits and the root's label."""
    from neurok_ros.articulation.head_readout import line_distances

    sizes = np.bincount(labels)
    while True:
        near = adjacency(labels, normalised, config.adjacency)
        pair = next(((a, b) for a in parents for b in parents
                     if a != b and parents[a] == parents[b] and near[a, b] and sizes[a] >= sizes[b]
                     and fits[a].type == "revolute"
                     and agree(fits[a], fits[b], config.snap_degrees, config.same_line, line_distances)), None)
        if pair is None:
            break
        keep, gone = pair
        labels = np.where(labels == gone, keep, labels)
        sizes[keep] += sizes[gone]
        sizes[gone] = 0
        parents = {c: (keep if p == gone else p) for c, p in parents.items() if c != gone}
        fits = {c: f for c, f in fits.items() if c != gone}
    used, labels = np.unique(labels, return_inverse=True)
    new = {int(old): i for i, old in enumerate(used)}
    return (labels.astype(np.int64), {new[c]: new[p] for c, p in parents.items()},
            {new[c]: f for c, f in fits.items()}, new[root])


def without_cycles(parents: dict[int, int], root: int) -> dict[int, int]:
    """parents with every part on a cycle (not reaching the root) hung from the root instead."""
    out = dict(parents)
    for start in list(out):
        seen, node = set(), start
        while node != root and node not in seen:
            seen.add(node)
            node = out[node]
        if node != root:
            out[start] = root
    return out


def renumber(labels: np.ndarray, parents: dict[int, int], fits: dict[int, JointFit], root: int):
    """Labels with the root 0 and parents before children (breadth first, larger parts first)."""
    order, frontier = [root], [root]
    sizes = np.bincount(labels)
    while frontier:
        children = sorted([c for c, p in parents.items() if p in frontier], key=lambda c: -sizes[c])
        order.extend(children)
        frontier = children
    new = {old: i for i, old in enumerate(order)}
    return (np.array([new[x] for x in range(len(order))])[labels],
            {new[c]: new[p] for c, p in parents.items()}, {new[c]: f for c, f in fits.items()})


def joint_in_mesh_frame(name: str, fit: JointFit, parent: int, child: int, transform) -> Joint:
    """A Joint in the input mesh's frame and units from a fit in the normalised frame."""
    values = fit.values if fit.type == "revolute" else fit.values / transform.scale
    confidence = fit.support * (1.0 - fit.residual / max(fit.extent, 1e-12))
    return Joint(name, fit.type, fit.axis, transform.invert(fit.origin), min(0.0, float(values.min())),
                 max(0.0, float(values.max())), parent, child, confidence)


class Panels(NamedTuple):
    """What snap_axis needs for panel directions (geometry/planar_directions.py): the mesh's faces
    (m, 3), the snapping angle in degrees, and the whole object's panel directions (k, 3)."""

    faces: np.ndarray
    degrees: float
    whole: np.ndarray

    @staticmethod
    def of(vertices: np.ndarray, faces: np.ndarray, degrees: float) -> "Panels":
        from neurok_ros.geometry.planar_directions import planar_directions

        return Panels(np.asarray(faces, dtype=np.int64), degrees, planar_directions(vertices, faces))


def snap_axis(joint: Joint, vertices: np.ndarray, labels: np.ndarray, degrees: float,
              panels: Panels | None = None) -> Joint:
    """The joint with its axis snapped to the nearest panel direction of the child, the parent or the
    whole object when one lies within panels.degrees (and `degrees`; a slide: within `degrees`, as
    slides run along flat sides), else to the nearest principal direction of those within
    `degrees`; the origin stays on the axis line nearest the old one."""
    tiers = []
    if panels is not None:
        from neurok_ros.articulation.urdf import face_labels
        from neurok_ros.geometry.planar_directions import planar_directions

        per_face = face_labels(panels.faces, labels)
        tiers.append((np.concatenate([planar_directions(vertices, panels.faces[per_face == joint.child]),
                                      planar_directions(vertices, panels.faces[per_face == joint.parent]),
                                      panels.whole]),
                      degrees if joint.type == "prismatic" else min(panels.degrees, degrees)))
    tiers.append((np.concatenate([principal_directions(vertices[labels == joint.child]),
                                  principal_directions(vertices[labels == joint.parent]),
                                  principal_directions(vertices)]), degrees))
    for candidates, within in tiers:
        if not len(candidates):
            continue
        cosines = np.abs(candidates @ joint.axis)
        best = int(np.argmax(cosines))
        if np.degrees(np.arccos(np.clip(cosines[best], -1, 1))) <= within:
            return replace(joint, axis=candidates[best] * np.sign(candidates[best] @ joint.axis))
    return joint


def is_cloth(vertices: np.ndarray, faces: np.ndarray, pieces: np.ndarray, ratio: float) -> bool:
    """Whether the mesh is one open, thin sheet (one welded piece, not closed, thin_sheet-thin): a
    cloth, a towel laid out, paper."""
    from neurok_ros.geometry.mass_properties import is_closed

    return (len(np.unique(pieces)) == 1 and is_thin_sheet(vertices, ratio)
            and not is_closed(vertices, faces))


def is_thin_sheet(vertices: np.ndarray, ratio: float) -> bool:
    """Whether the vertices (n, 3) lie close to a surface patch: smallest principal extent below
    `ratio` of the largest."""
    centred = vertices - vertices.mean(0)
    extents = np.ptp(centred @ principal_directions(vertices).T, axis=0)
    return bool(extents.min() < ratio * max(extents.max(), 1e-300))
