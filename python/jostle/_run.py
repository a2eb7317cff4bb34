"""What the searches share: the progress they report about once a second, the
seed's range."""

from typing import Callable, NamedTuple, Optional

from . import _jostle


class Progress(NamedTuple):
    """time: seconds since the start; best: circles, the best R so far; trunks,
    blocks; work: circles, trials; trunks, annealing moves."""

    time: float
    best: float
    work: int


def adapt(progress: Optional[Callable[[Progress], object]]):
    """The callable the extension calls with (time, best, work): it passes a
    Progress to the user's progress; a true return stops the run."""
    if progress is None:
        return None
    if not callable(progress):
        raise TypeError("progress: expected a callable taking a jostle.Progress, or None")
    return lambda time, best, work: progress(Progress(time, best, work))


def check_seed(seed) -> int:
    """The seed as the C API takes it (an unsigned 64-bit integer)."""
    s = int(seed)
    if s < 0 or s >= 1 << 64:
        raise _jostle.InputError("seed: expected an integer in [0, 2^64)")
    return s
