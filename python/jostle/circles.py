"""Circles: the smallest circle around circles of given radii."""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from . import _jostle
from ._run import adapt, check_seed


@dataclass(frozen=True, eq=False)
class Circles:
    """A legal packing (the exact check passed) and how its run went.

    centres: (n, 2) array, in the order of the radii given, around a container
    of radius R centred at the origin. record: the published record for radii
    1..n (n = 5..50), else None; gap: R / record - 1, or None. stopped_by:
    "time", "target", "signal" (Ctrl-C or the progress callable) or "rounds".
    device: "cpu" or "cuda"; device_name: "CPU, 16 threads",
    "NVIDIA H100 80GB HBM3".
    """

    centres: np.ndarray
    radii: np.ndarray
    R: float
    record: Optional[float]
    gap: Optional[float]
    max_overlap: float
    time: float
    time_to_best: float
    seed: int
    trials: int
    relax_steps: int
    restarts: int
    stopped_by: str
    device: str
    device_name: str
    _result: object = field(repr=False, compare=False)

    def write(self, json=None, svg=None, txt=None):
        """Writes jostle's JSON (docs/formats.md), an SVG picture and Packomania
        text, as `jostle circles` does; each path may be None."""
        _jostle.circles_write(self._result, json, svg, txt)


def circles_record(n: int) -> Optional[float]:
    """The contest record for radii 1..n (n = 5..50), else None."""
    r = _jostle.circles_record(int(n))
    return r if r > 0 else None


def pack_circles(radii, time=60.0, device="auto", seed=1, threads=0, target=None, rounds=0,
                 batch=0, progress=None, checkpoint=None, continue_from=None) -> Circles:
    """Packs circles of the given radii (finite, > 0, ratio at most 1e6) into
    the smallest enclosing circle found.

    time: seconds (0: no limit); target: stop once R <= target; rounds: stop
    after this many launches (with fixed batch and threads the same seed gives
    the same packing); device: "auto" (CUDA when present), "cpu" or "cuda";
    threads: host threads (0: all); progress: called with a jostle.Progress
    about once a second, a true return stops the run. Ctrl-C stops it and
    returns the best so far. checkpoint: a path the search's whole state is
    written to every minute and at the stop; continue_from: a checkpoint to go
    on from, with its seed and batch (time and rounds count from the first
    run's start: with rounds, the packing of one run). Raises
    jostle.InputError for bad input.
    """
    r = np.ascontiguousarray(radii, dtype=np.float64)
    if r.ndim != 1:
        raise _jostle.InputError("radii: expected a sequence of numbers")
    result, f = _jostle.pack_circles(
        r, time=float(time), device=str(device), seed=check_seed(seed), threads=int(threads),
        target=0.0 if target is None else float(target), rounds=int(rounds), batch=int(batch),
        progress=adapt(progress), checkpoint=checkpoint, continue_from=continue_from)
    n = r.shape[0]
    x, y = np.frombuffer(f["x"]), np.frombuffer(f["y"])
    record = f["record"] if f["record"] > 0 else None
    return Circles(
        centres=np.stack([x, y], axis=1).reshape(n, 2), radii=np.frombuffer(f["r"]), R=f["R"],
        record=record, gap=f["R"] / record - 1.0 if record else None,
        max_overlap=f["max_overlap"], time=f["time"], time_to_best=f["time_to_best"],
        seed=f["seed"], trials=f["trials"], relax_steps=f["relax_steps"],
        restarts=f["restarts"], stopped_by=f["stopped_by"], device=f["device"],
        device_name=f["device_name"], _result=result)


__all__ = ["Circles", "circles_record", "pack_circles"]
