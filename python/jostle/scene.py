"""Scenes: rigid spheres and boxes on static planes with Coulomb friction and
impacts, stepped by Moreau's midpoint scheme with a prox solver."""

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import _jostle

_SHAPES = {"sphere": 0, "box": 1, "plane": 2}
_DEFAULT_DENSITY = 1000.0  # kg / m^3, the scene file's default material


@dataclass(frozen=True)
class Body:
    """One body of a created Scene (SI units). shape: "sphere", "box" or
    "plane"; size: sphere (radius, 0, 0), box half-extents; orientation: unit
    quaternion (w, x, y, z), a plane's normal being its z axis; density 0:
    static. sphere(), box() and plane() make them."""

    shape: str
    size: Sequence[float]
    position: Sequence[float] = (0.0, 0.0, 0.0)
    orientation: Sequence[float] = (1.0, 0.0, 0.0, 0.0)
    velocity: Sequence[float] = (0.0, 0.0, 0.0)
    angular_velocity: Sequence[float] = (0.0, 0.0, 0.0)
    density: float = _DEFAULT_DENSITY

    def _row(self):
        if self.shape not in _SHAPES:
            raise _jostle.InputError('body: shape "%s" (expected sphere, box or plane)'
                                     % self.shape)
        parts = [(self.size, 3, "size"), (self.position, 3, "position"),
                 (self.orientation, 4, "orientation"), (self.velocity, 3, "velocity"),
                 (self.angular_velocity, 3, "angular_velocity")]
        row = [float(_SHAPES[self.shape])]
        for value, n, name in parts:
            v = np.asarray(value, dtype=np.float64).ravel()
            if v.shape != (n,):
                raise _jostle.InputError("body: %s: expected %d numbers" % (name, n))
            row.extend(v)
        row.append(float(self.density))
        return row


def sphere(radius, position=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0),
           angular_velocity=(0.0, 0.0, 0.0), density=_DEFAULT_DENSITY, static=False) -> Body:
    return Body("sphere", (float(radius), 0.0, 0.0), position, (1.0, 0.0, 0.0, 0.0), velocity,
                angular_velocity, 0.0 if static else density)


def box(half_extents, position=(0.0, 0.0, 0.0), orientation=(1.0, 0.0, 0.0, 0.0),
        velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), density=_DEFAULT_DENSITY,
        static=False) -> Body:
    return Body("box", tuple(half_extents), position, orientation, velocity, angular_velocity,
                0.0 if static else density)


def plane(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0)) -> Body:
    """A static plane through point; the solid side is -normal."""
    n = np.asarray(normal, dtype=np.float64)
    length = float(np.linalg.norm(n))
    if n.shape != (3,) or not length > 0.0 or not math.isfinite(length):
        raise _jostle.InputError("plane: normal: expected 3 finite numbers, not all 0")
    n = n / length
    # the rotation taking z to n: (1 + z.n, z x n) normalised; half a turn about x for -z
    q = np.array([1.0 + n[2], -n[1], n[0], 0.0])
    if q[0] < 1e-12:
        q = np.array([0.0, 1.0, 0.0, 0.0])
    q /= np.linalg.norm(q)
    # the library takes the normal as the plane's size; the orientation (z along n) is
    # kept for the reader
    return Body("plane", tuple(float(x) for x in n), point, tuple(float(x) for x in q), density=0.0)


class Scene:
    """A simulation you step and read.

        s = jostle.Scene([jostle.plane(), jostle.sphere(0.5, (0, 0, 2))])
        s.step(500)
        s.positions        # (n, 3) array, m

    Scene.from_file reads a scene file (docs/formats.md). Settings left None
    keep the library's defaults: gravity (0, 0, -9.81), dt 0.002 s, friction
    0.5, restitution 0, solver "sor" ("jor", "apgd"), iterations the solver's.
    """

    def __init__(self, bodies, *, gravity=None, dt=None, friction=None, restitution=None,
                 solver=None, iterations=None, device="auto", threads=0):
        _need_scene()
        rows = [b._row() for b in bodies]
        flat = np.ascontiguousarray(rows, dtype=np.float64).reshape(-1)
        self._sim = _jostle.scene_create(
            flat, gravity=gravity, dt=dt, friction=friction, restitution=restitution,
            solver=solver, iterations=iterations, device=str(device), threads=int(threads))

    @classmethod
    def from_file(cls, path, device="auto", threads=0) -> "Scene":
        _need_scene()
        s = cls.__new__(cls)
        s._sim = _jostle.scene_load(path, device=str(device), threads=int(threads))
        return s

    def step(self, n=1) -> "Scene":
        """Advances n time steps; Ctrl-C stops it between steps (the steps done
        are kept) and raises KeyboardInterrupt. A diverged solve that leaves a
        body's state not finite ends the run there (fewer steps: see
        steps)."""
        _jostle.scene_step(self._sim, int(n))
        return self

    def _state(self, what, per):
        return np.frombuffer(_jostle.scene_state(self._sim, what)).reshape(-1, per)

    @property
    def positions(self) -> np.ndarray:
        """(n, 3) centres of mass (a plane: its point), m."""
        return self._state("positions", 3)

    @property
    def orientations(self) -> np.ndarray:
        """(n, 4) unit quaternions (w, x, y, z), body to world."""
        return self._state("orientations", 4)

    @property
    def velocities(self) -> np.ndarray:
        """(n, 3) linear velocities, m/s."""
        return self._state("velocities", 3)

    @property
    def time(self) -> float:
        """Simulated seconds."""
        return _jostle.scene_info(self._sim)["time"]

    @property
    def steps(self) -> int:
        return _jostle.scene_info(self._sim)["steps"]

    @property
    def device_name(self) -> str:
        return _jostle.scene_info(self._sim)["device_name"]

    def __len__(self) -> int:
        return _jostle.scene_info(self._sim)["bodies"]


def _need_scene():
    if not hasattr(_jostle, "scene_create"):
        raise NotImplementedError("this jostle was built without the scene API "
                                  "(include/jostle/scene.h)")


__all__ = ["Body", "Scene", "box", "plane", "sphere"]
