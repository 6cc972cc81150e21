"""Message conversion timings (no DDS): PointCloud2 trajectories and mesh Markers."""
from __future__ import annotations

import numpy as np

from neurok_ros.benchmarks.timing import Measurement, measure


def benchmark_ros_conversions() -> list[Measurement]:
    import trimesh
    from builtin_interfaces.msg import Time
    from sensor_msgs.msg import PointCloud2
    from visualization_msgs.msg import Marker

    from neurok_ros.ros.mesh_marker import marker_to_mesh, mesh_to_marker, triangle_list_marker
    from neurok_ros.ros.message_bytes import from_bytes, to_bytes
    from neurok_ros.ros.trajectory_cloud import cloud_to_frames, frames_to_cloud

    rows = []
    rng = np.random.default_rng(0)
    stamp = Time(sec=1, nanosec=0)
    for T in (30, 60):
        frames = rng.normal(size=(T, 10_000, 3)).astype(np.float32)
        times = np.arange(T, dtype=np.float32) / 30
        # each closure is timed in its own iteration: the defaults bind this iteration's arrays (B023)
        rows.append(measure(f"PointCloud2 build, {T} x 10k points",
                            lambda frames=frames, times=times: frames_to_cloud(frames, times, "mesh", stamp)))
        cloud = frames_to_cloud(frames, times, "mesh", stamp)
        rows.append(measure(f"PointCloud2 parse, {T} x 10k points", lambda cloud=cloud: cloud_to_frames(cloud)))
        blob = to_bytes(cloud)
        rows.append(measure(f"PointCloud2 deserialise, {T} x 10k points ({len(blob) / 1e6:.1f} MB)",
                            lambda blob=blob: from_bytes(blob, PointCloud2)))
    sphere = trimesh.creation.icosphere(subdivisions=5)
    V, F = np.asarray(sphere.vertices), np.asarray(sphere.faces)
    rows.append(measure("Marker MESH_RESOURCE (PLY) build, 10k vertices", lambda: mesh_to_marker(V, F, "mesh")))
    marker = mesh_to_marker(V, F, "mesh")
    rows.append(measure("Marker MESH_RESOURCE (PLY) to mesh, 10k vertices", lambda: marker_to_mesh(marker)))
    rows.append(measure("Marker TRIANGLE_LIST build, 20k triangles", lambda: triangle_list_marker(V, F, "mesh"),
                        repeats=5))
    tri = triangle_list_marker(V, F, "mesh")
    rows.append(measure("Marker TRIANGLE_LIST to welded mesh, 20k triangles", lambda: marker_to_mesh(tri), repeats=5))
    blob = to_bytes(tri)
    rows.append(measure("Marker TRIANGLE_LIST deserialise, 20k triangles",
                        lambda: from_bytes(blob, Marker), repeats=5))
    return rows
