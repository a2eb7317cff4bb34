"""Trunk volume: as many 200 x 100 x 50 mm blocks (one liter each, DIN 70020 /
ISO 3832) as fit into a closed mesh, in any position and orientation."""

import os
from dataclasses import dataclass

import numpy as np

from . import _jostle
from ._run import adapt, check_seed


@dataclass(frozen=True, eq=False)
class Trunk:
    """A legal packing of count blocks (liters = count) and how its run went.

    centres: (count, 3) array, mm, in the mesh's frame; quaternions: (count, 4)
    unit quaternions (w, x, y, z) turning a block's axes (200, 100, 50 mm along
    x, y, z) into the mesh's frame. mesh_volume and reachable (the part some
    single block can cover) are liters; upper_bound is the floor of the smaller;
    baseline is the grid baseline's count. fills_complete is False when time
    or Ctrl-C cut the fills short below upper_bound: count is then what they
    reached, not the trunk's volume. max_penetration and max_overlap: the
    exact check's deepest block into the surface and into another, mm.
    """

    count: int
    liters: int
    centres: np.ndarray
    quaternions: np.ndarray
    mesh_volume: float
    reachable: float
    upper_bound: int
    baseline: int
    fills_complete: bool
    max_penetration: float
    max_overlap: float
    time: float
    stopped_by: str
    device_name: str


def trunk_volume(mesh, time=60.0, device="auto", seed=1, threads=0, units="mm",
                 progress=None) -> Trunk:
    """Packs blocks into mesh: a path (STL, OBJ, PLY, glTF, 3MF, ...) or a
    (vertices, triangles) pair of arrays, (m, 3) coordinates and (k, 3) vertex
    indices. The mesh must be closed and free of self-intersection; it is
    repaired and checked as `jostle trunk` does.

    time: the whole run's seconds; units: the mesh's length unit, "mm", "cm",
    "m" or "in"; device, threads, seed and progress as for pack_circles. Ctrl-C
    stops the search and returns the best so far.
    """
    if not hasattr(_jostle, "trunk_volume"):
        raise NotImplementedError("this jostle was built without the trunk API "
                                  "(include/jostle/trunk.h)")
    kw = dict(time=float(time), device=str(device), seed=check_seed(seed), threads=int(threads),
              units=str(units), progress=adapt(progress))
    if isinstance(mesh, (str, bytes, os.PathLike)):
        f = _jostle.trunk_volume(mesh, **kw)
    else:
        try:
            vertices, triangles = mesh
        except (TypeError, ValueError):
            raise TypeError("mesh: expected a path or a (vertices, triangles) pair") from None
        v = np.ascontiguousarray(vertices, dtype=np.float64)
        t = np.asarray(triangles)
        if v.ndim != 2 or v.shape[1] != 3:
            raise _jostle.InputError("mesh: vertices: expected an (m, 3) array")
        if t.ndim != 2 or t.shape[1] != 3 or not (t.size == 0 or np.issubdtype(t.dtype, np.integer)):
            raise _jostle.InputError("mesh: triangles: expected a (k, 3) array of integers")
        if t.size and (t.min() < 0 or t.max() >= v.shape[0]):
            raise _jostle.InputError("mesh: triangles: vertex index out of range 0..%d"
                                     % (v.shape[0] - 1))
        f = _jostle.trunk_volume(None, v, np.ascontiguousarray(t, dtype=np.intc), **kw)
    k = f["count"]
    return Trunk(
        count=k, liters=k, centres=np.frombuffer(f["centres"]).reshape(k, 3),
        quaternions=np.frombuffer(f["quaternions"]).reshape(k, 4),
        mesh_volume=f["mesh_volume"], reachable=f["reachable"], upper_bound=f["upper_bound"],
        baseline=f["baseline"], fills_complete=f["fills_complete"],
        max_penetration=f["max_penetration"],
        max_overlap=f["max_overlap"], time=f["time"], stopped_by=f["stopped_by"],
        device_name=f["device_name"])


__all__ = ["Trunk", "trunk_volume"]
