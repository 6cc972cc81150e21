"""Geometry core timings: loading and cleaning, sampling, vertex driving, Chamfer and IoU."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from neurok_ros.benchmarks.timing import Measurement, measure


def benchmark_geometry() -> list[Measurement]:
    import torch
    import trimesh

    from neurok_ros.geometry import dual_quaternion as dq
    from neurok_ros.geometry.mesh_cleaning import clean_mesh
    from neurok_ros.geometry.mesh_io import load_mesh, save_mesh
    from neurok_ros.geometry.metrics import chamfer_distances, volumetric_iou
    from neurok_ros.geometry.normalisation import NormalisingTransform
    from neurok_ros.geometry.surface_sampling import sample_surface
    from neurok_ros.geometry.vertex_driving import (
        blend_matrix,
        build_vertex_driver,
        drive_vertices_dq,
        drive_vertices_dq_frames,
    )

    rows = []
    big = trimesh.creation.icosphere(subdivisions=5)  # 10,242 vertices, 20,480 faces
    V, F = np.asarray(big.vertices), np.asarray(big.faces)
    small = trimesh.creation.icosphere(subdivisions=4)  # 2,562 vertices, 5,120 faces
    Vs, Fs = np.asarray(small.vertices), np.asarray(small.faces)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sphere.ply"
        save_mesh(path, V, F)
        rows.append(measure("load + clean a 10k-vertex PLY", lambda: clean_mesh(*load_mesh(path))))
    rows.append(measure("sample 100k surface points (5k faces)", lambda: sample_surface(Vs, Fs, 100_000, rng)))
    transform = NormalisingTransform.from_vertices(Vs)
    moved = Vs + np.array([0.05, 0, 0])
    rows.append(measure("Chamfer-L1/L2, 100k samples each (5k faces)",
                        lambda: chamfer_distances(moved, Fs, Vs, Fs, transform), repeats=5))
    rows.append(measure("IoU, 100k winding-number points (5k faces)",
                        lambda: volumetric_iou(moved, Fs, Vs, Fs, transform), repeats=5))
    rows += inside_outside_rows()
    samples = sample_surface(V, F, 512, rng)
    driver = build_vertex_driver(V, samples.points, k=6)
    sample_dqs = dq.from_rotation_translation(np.broadcast_to(np.eye(3), (60, 512, 3, 3)),
                                              rng.normal(size=(60, 512, 3)) * 0.01)
    rows.append(measure("build k=6 vertex driver (10k vertices, 512 samples)",
                        lambda: build_vertex_driver(V, samples.points, k=6)))
    rows.append(measure("drive 10k vertices by DQ blending, 60 frames (numpy, gathering)",
                        lambda: drive_vertices_dq(driver, V, sample_dqs), repeats=5))
    matrix = blend_matrix(driver, 512, torch.zeros(1))
    rest, dqs32 = torch.as_tensor(V, dtype=torch.float32), torch.as_tensor(sample_dqs, dtype=torch.float32)
    rows.append(measure("drive 10k vertices by DQ blending, 60 frames (torch float32, one sparse product)",
                        lambda: drive_vertices_dq_frames(matrix, rest, dqs32), repeats=5))
    return rows


def inside_outside_rows() -> list[Measurement]:
    """The IoU's inside/outside answers for 100k uniform points in the padded box of the 10k-vertex
    laptop of `neurok ik`'s benchmark (a closed assembly): octree of surface-free cells against point by
    point (geometry/occupancy.py); the answers must agree."""
    from neurok_ros.benchmarks.example_meshes import ten_thousand_vertex_laptop
    from neurok_ros.geometry.metrics import union_box_points
    from neurok_ros.geometry.normalisation import NormalisingTransform
    from neurok_ros.geometry.occupancy import free_cell_answers, winding_inside

    with tempfile.TemporaryDirectory() as tmp:
        V, F = ten_thousand_vertex_laptop(Path(tmp) / "laptop10k.ply")
    V = NormalisingTransform.from_vertices(V).apply(V)
    F = np.asarray(F, dtype=np.int64)
    points = union_box_points(V, V, 100_000, 0)
    if not np.array_equal(free_cell_answers(V, F, points), winding_inside(V, F, points)):
        raise RuntimeError("the octree's inside/outside answers differ from the point-by-point ones")
    name = f"inside/outside of 100k IoU points, {len(V)}-vertex laptop ({len(F)} faces)"
    return [measure(f"{name}: octree of surface-free cells", lambda: free_cell_answers(V, F, points), repeats=5),
            measure(f"{name}: point by point", lambda: winding_inside(V, F, points), repeats=3)]
