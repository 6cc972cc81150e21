"""Ray-cast visibility of surface samples: what one depth camera sees of a mesh."""
import numpy as np
import pytest
import trimesh

from neurok_ros.errors import NeurokInputError
from neurok_ros.geometry.surface_sampling import sample_surface
from neurok_ros.geometry.visibility import orbit_camera, visible_from, visible_samples

pytestmark = pytest.mark.unit


def _two_boxes():
    """A unit cube at the origin and a second one 3 m behind it along -x."""
    front, back = trimesh.creation.box(), trimesh.creation.box()
    back.apply_translation([-3.0, 0.0, 0.0])
    both = trimesh.util.concatenate([front, back])
    return np.asarray(both.vertices), np.asarray(both.faces)


def test_a_camera_on_the_x_axis_sees_the_front_face_and_not_the_box_behind():
    V, F = _two_boxes()
    samples = sample_surface(V, F, 4000, np.random.default_rng(0))
    seen = visible_from(V, F, samples, [10.0, 0.0, 0.0])
    front_face = np.abs(samples.points[:, 0] - 0.5) < 1e-9
    assert seen[front_face].all()
    assert not seen[samples.points[:, 0] < -1.0].any()  # the back box is hidden behind the front one
    assert not seen[np.abs(samples.points[:, 0] + 0.5) < 1e-9].any()  # the front box's own far face
    from_behind = visible_from(V, F, samples, [-10.0, 0.0, 0.0])
    assert from_behind[np.abs(samples.points[:, 0] + 3.5) < 1e-9].all()
    assert not from_behind[front_face].any()


def test_visible_samples_come_from_the_faces_the_camera_faces():
    box = trimesh.creation.box()
    camera = orbit_camera(box.vertices, azimuth=0.3, elevation=0.5)
    assert np.linalg.norm(camera) == pytest.approx(2.0 * np.sqrt(3.0))
    points = visible_samples(box.vertices, box.faces, camera, 3000, np.random.default_rng(1))
    assert points.shape == (3000, 3)
    on = {axis: np.abs(points[:, i] - sign * 0.5) < 1e-9 for i, axis in enumerate("xyz") for sign in (1,)}
    assert all(on[axis].mean() > 0.2 for axis in "xyz")  # +x, +y and +z faces face the camera
    hidden = (np.abs(points + 0.5) < 1e-9).any(axis=1) & ~(np.abs(points - 0.5) < 1e-9).any(axis=1)
    assert not hidden.any()  # no sample from the -x, -y or -z faces away from their edges



def test_a_camera_that_is_not_three_finite_numbers_is_a_clear_error():
    box = trimesh.creation.box()
    for camera in ([np.nan, 0.0, 5.0], [1.0, 2.0]):
        with pytest.raises(NeurokInputError, match="3 finite coordinates"):
            visible_samples(box.vertices, box.faces, camera, 100, np.random.default_rng(0))
