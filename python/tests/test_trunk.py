"""jostle.trunk_volume: the cuboid's 200 liters from a file and from arrays.
Skipped while the build has no trunk API (include/jostle/trunk.h not built)."""

import os

import numpy as np
import pytest

import jostle


MESH_DIR = os.environ.get("JL_MESH_DIR",
                          os.path.join(os.path.dirname(__file__), "..", "..", "meshes"))
CUBOID = os.path.join(MESH_DIR, "cuboid-1000x500x400.stl")


def cuboid_arrays(a=1000.0, b=500.0, c=400.0):
    """A closed box [0, a] x [0, b] x [0, c], mm: 8 vertices, 12 triangles."""
    v = np.array([[x, y, z] for x in (0, a) for y in (0, b) for z in (0, c)])
    # vertex index = 4 x + 2 y + z (each 0 or 1); two triangles a face
    t = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5],   # x = 0, x = a
                  [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6],   # y = 0, y = b
                  [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])  # z = 0, z = c
    return v, t


def assert_trunk_legal(t, count):
    assert t.count == t.liters == count
    assert t.centres.shape == (count, 3) and t.quaternions.shape == (count, 4)
    assert np.allclose(np.linalg.norm(t.quaternions, axis=1), 1.0, atol=1e-9)
    assert t.mesh_volume == pytest.approx(200.0, rel=1e-9)
    assert t.upper_bound == 200 and t.fills_complete is True
    assert t.max_penetration <= 1e-6 and t.max_overlap <= 1e-6


def test_cuboid_file_holds_200_blocks():
    t = jostle.trunk_volume(CUBOID, time=20, seed=1)
    assert_trunk_legal(t, 200)
    assert t.baseline <= 200 and t.stopped_by in ("time", "target", "signal", "rounds")


def test_cuboid_arrays_hold_200_blocks():
    v, tri = cuboid_arrays(100.0, 50.0, 40.0)  # cm
    t = jostle.trunk_volume((v, tri), time=20, units="cm")
    assert_trunk_legal(t, 200)
    # the centres in the mesh's frame and units: inside the box
    assert np.all(t.centres >= 0) and np.all(t.centres <= [1000.0, 500.0, 400.0])


def test_bad_mesh_raises():
    with pytest.raises(jostle.Error) as e:
        jostle.trunk_volume("/nonexistent/trunk.stl", time=1)
    assert "/nonexistent/trunk.stl" in str(e.value)
    v, tri = cuboid_arrays()
    with pytest.raises(jostle.InputError, match="vertex index out of range"):
        jostle.trunk_volume((v, tri + 8), time=1)
    with pytest.raises(jostle.InputError):
        jostle.trunk_volume((v, tri[:11]), time=1)  # not closed
    with pytest.raises(jostle.InputError, match="units"):
        jostle.trunk_volume(CUBOID, time=1, units="furlong")
