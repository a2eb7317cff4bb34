"""jostle.Scene: a sphere dropped onto a plane; a scene file. Skipped while
the build has no scene API (include/jostle/scene.h not built)."""

import os

import numpy as np
import pytest

import jostle


PROBLEM_DIR = os.environ.get("JL_PROBLEM_DIR",
                             os.path.join(os.path.dirname(__file__), "..", "..", "problems"))
G = 9.81


def test_sphere_falls_then_rests_on_the_plane():
    s = jostle.Scene([jostle.plane(), jostle.sphere(0.5, position=(0.0, 0.0, 2.0))],
                     dt=0.002, friction=0.5, restitution=0.0, device="cpu")
    assert len(s) == 2 and s.time == 0.0 and s.steps == 0
    # free fall: the midpoint scheme is exact under constant gravity
    s.step(100)
    t = 100 * 0.002
    assert s.steps == 100 and s.time == pytest.approx(t, rel=1e-12)
    p, v = s.positions, s.velocities
    assert p.shape == (2, 3) and v.shape == (2, 3) and s.orientations.shape == (2, 4)
    assert p[1] == pytest.approx([0.0, 0.0, 2.0 - 0.5 * G * t * t], rel=1e-9, abs=1e-12)
    assert v[1] == pytest.approx([0.0, 0.0, -G * t], rel=1e-9, abs=1e-12)
    assert np.array_equal(p[0], [0.0, 0.0, 0.0])  # the plane is static
    # lands (t = 0.55 s) and stays on the plane with restitution 0: the midpoint scheme
    # meets the contact within a step and stops the sphere there, so it rests at most one
    # step's fall at the impact speed (plus gravity's share of that step) below r
    s.step(650)
    v_impact = np.sqrt(2.0 * G * 1.5)
    dt = 0.002
    assert 0.5 - v_impact * dt - G * dt * dt <= s.positions[1, 2] <= 0.5 + 1e-12
    assert np.linalg.norm(s.velocities[1]) < 1e-2
    assert np.allclose(s.orientations[1], [1.0, 0.0, 0.0, 0.0])


def test_tilted_plane_and_box_bodies():
    n = np.array([0.0, 1.0, 1.0]) / np.sqrt(2.0)
    q = np.array(jostle.plane(normal=n).orientation)
    # the plane's z axis, turned by q, is its normal
    w, x, y, z = q
    zaxis = np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])
    assert zaxis == pytest.approx(n, abs=1e-12)
    assert jostle.plane(normal=(0, 0, -1)).orientation == (0.0, 1.0, 0.0, 0.0)
    s = jostle.Scene([jostle.plane(), jostle.box((0.2, 0.1, 0.05), position=(0, 0, 0.05))],
                     device="cpu")
    s.step(50)
    assert s.positions[1] == pytest.approx([0.0, 0.0, 0.05], abs=1e-3)


def test_scene_file():
    s = jostle.Scene.from_file(os.path.join(PROBLEM_DIR, "scenes", "demo-drop.json"), device="cpu")
    n = len(s)
    z0 = s.positions[:, 2].copy()
    s.step(10)
    assert s.steps == 10 and s.time == pytest.approx(0.02)
    assert s.positions.shape == (n, 3)
    z = s.positions[1:, 2]
    assert np.all(z <= z0[1:]) and np.any(z < z0[1:])  # the bodies fall
    assert s.device_name


def test_bad_scenes_raise():
    with pytest.raises(jostle.Error) as e:
        jostle.Scene.from_file("/nonexistent/scene.json")
    assert "/nonexistent/scene.json" in str(e.value)
    with pytest.raises(jostle.InputError):
        jostle.Scene([jostle.plane(), jostle.sphere(-1.0)])
    with pytest.raises(jostle.InputError, match="shape"):
        jostle.Scene([jostle.Body("cone", (1, 1, 1))])
