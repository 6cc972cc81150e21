"""What one depth camera sees of a mesh: the area-uniform surface samples that a ray from the camera
reaches before any other face (open3d's Embree ray caster), as a scan from one viewpoint would."""
from __future__ import annotations

import numpy as np

from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry.mesh_cleaning import validate_mesh_arrays
from neurok_ros.geometry.surface_sampling import SurfaceSamples, sample_surface


def _scene(vertices, faces):
    """open3d ray-casting scene of the mesh ((n, 3) vertices, (m, 3) faces)."""
    import open3d as o3d

    V, F = validate_mesh_arrays(vertices, faces)
    scene = o3d.t.geometry.RaycastingScene()
    scene.add_triangles(o3d.core.Tensor(V.astype(np.float32)), o3d.core.Tensor(F.astype(np.uint32)))
    return scene


def _first_surface(scene, samples: SurfaceSamples, camera) -> np.ndarray:
    import open3d as o3d

    origin = np.broadcast_to(np.asarray(camera, dtype=np.float64), samples.points.shape)
    rays = np.concatenate([origin, samples.points - origin], axis=1).astype(np.float32)
    hit = scene.cast_rays(o3d.core.Tensor(rays))
    first_face = hit["primitive_ids"].numpy().astype(np.int64)
    t_hit = hit["t_hit"].numpy()  # in units of the ray's length: 1 at the sample
    return (first_face == samples.face_ids) | (t_hit >= 1.0 - 1e-4)


def visible_from(vertices, faces, samples: SurfaceSamples, camera) -> np.ndarray:
    """(count,) bool: whether each sample (on face samples.face_ids) is the first surface a ray from
    `camera` ((3,), mesh frame and units) meets: the ray hits the sample's own face first, or hits
    nothing before it."""
    return _first_surface(_scene(vertices, faces), samples, camera)


def visible_samples(vertices, faces, camera, count: int, rng: np.random.Generator,
                    max_rounds: int = 6) -> np.ndarray:
    """(count, 3) area-uniform samples of the part of the surface visible from `camera` ((3,), mesh
    frame and units), in the mesh frame: draws 4x count samples at a time, keeps the visible ones,
    until count are found (fewer when max_rounds draws do not find them). Raises NeurokInputError for a
    camera that is not 3 finite numbers or that sees none of the samples."""
    camera = np.asarray(camera, dtype=np.float64)
    if camera.shape != (3,) or not np.isfinite(camera).all():
        raise NeurokInputError(f"the camera must be 3 finite coordinates, got {camera.tolist()}")
    scene = _scene(vertices, faces)
    found: list[np.ndarray] = []
    total = 0
    for _ in range(max_rounds):
        samples = sample_surface(vertices, faces, 4 * int(count), rng)
        points = samples.points[_first_surface(scene, samples, camera)]
        found.append(points)
        total += len(points)
        if total >= count:
            break
    if total == 0:
        raise NeurokInputError(f"no part of the surface is visible from the camera at {np.round(camera, 4).tolist()}")
    return np.concatenate(found)[:count]


def orbit_camera(vertices, azimuth: float, elevation: float, distance: float = 2.0) -> np.ndarray:
    """(3,) camera position looking at the bounding-box centre of (n, 3) vertices from `azimuth` and
    `elevation` (radians; z up, azimuth from +x), `distance` bounding-box diagonals away."""
    V = np.asarray(vertices, dtype=np.float64)
    low, high = V.min(axis=0), V.max(axis=0)
    direction = np.array([np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth),
                          np.sin(elevation)])
    return 0.5 * (low + high) + distance * float(np.linalg.norm(high - low)) * direction
