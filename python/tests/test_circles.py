"""jostle.pack_circles and friends: records, legality, errors, outputs,
progress and Ctrl-C."""

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

import jostle
from circle_checks import assert_legal_circles


def test_ten_circles_reach_the_record():
    record = jostle.circles_record(10)
    p = jostle.pack_circles(range(1, 11), time=30, target=record * (1 + 1e-9))
    assert p.record == record
    assert abs(p.R / p.record - 1) < 1e-9
    assert abs(p.gap) < 1e-9
    assert p.stopped_by == "target"
    assert p.time < 30
    assert p.centres.shape == (10, 2) and p.centres.dtype == np.float64
    assert np.array_equal(p.radii, np.arange(1, 11, dtype=np.float64))
    assert p.device in ("cpu", "cuda") and p.device_name
    assert p.trials > 0 and p.seed == 1
    assert 0 <= p.max_overlap <= 1e-10 * p.R
    assert_legal_circles(p.centres, p.radii, p.R)


def test_records_and_other_radii():
    assert jostle.circles_record(10) == pytest.approx(22.000193, rel=1e-7)
    assert jostle.circles_record(4) is None and jostle.circles_record(51) is None
    # not the contest instance: no record, radii kept in the order given
    radii = np.array([3.0, 1.0, 2.0, 2.0, 1.5])
    p = jostle.pack_circles(radii, time=2, rounds=1)
    assert p.record is None and p.gap is None
    assert np.array_equal(p.radii, radii)
    assert p.stopped_by in ("rounds", "time")
    assert_legal_circles(p.centres, p.radii, p.R)
    # three equal circles: R = 1 + 2 / sqrt(3) exactly
    p = jostle.pack_circles([1.0, 1.0, 1.0], time=5, target=(1 + 2 / 3**0.5) * (1 + 1e-9))
    assert p.R == pytest.approx(1 + 2 / 3**0.5, rel=1e-9)


def test_same_seed_same_packing():
    a = jostle.pack_circles(range(1, 8), rounds=2, batch=8, threads=2, seed=7)
    b = jostle.pack_circles(np.arange(1.0, 8.0), rounds=2, batch=8, threads=2, seed=7)
    assert a.stopped_by == "rounds" and a.seed == 7
    assert a.R == b.R
    assert np.array_equal(a.centres, b.centres)


def test_checkpoint_two_parts_give_one_run(tmp_path):
    radii = np.arange(1.0, 16.0)
    kw = dict(device="cpu", threads=2, batch=8)
    whole = jostle.pack_circles(radii, rounds=4, seed=9, **kw)
    ck = tmp_path / "search.ck"
    first = jostle.pack_circles(radii, rounds=2, seed=9, checkpoint=ck, **kw)
    assert ck.stat().st_size > 0
    # the checkpoint's seed and batch, whatever is given here
    rest = jostle.pack_circles(radii, rounds=4, device="cpu", threads=2, continue_from=ck)
    assert rest.seed == 9 and rest.trials == whole.trials and first.trials < whole.trials
    assert rest.R == whole.R
    assert np.array_equal(rest.centres, whole.centres)
    with pytest.raises(jostle.InputError, match="search.ck: n: the checkpoint holds 15 circles"):
        jostle.pack_circles(np.arange(1.0, 15.0), rounds=1, device="cpu", continue_from=ck)


@pytest.mark.parametrize("radii, message", [
    ([1.0, -2.0, 3.0], "radii: r[1]: -2 is outside"),
    ([1.0, float("nan")], "radii: r[1]: nan is outside"),
    ([1.0, 2e6], "is more than 1e+06 times"),
    ([], "radii: 0 circles given"),
])
def test_bad_radii_raise_jostles_message(radii, message):
    with pytest.raises(jostle.InputError) as e:
        jostle.pack_circles(radii, time=1)
    assert message in str(e.value)
    assert e.value.code == 2
    assert isinstance(e.value, ValueError) and isinstance(e.value, jostle.Error)


def test_bad_options_raise():
    with pytest.raises(jostle.InputError, match='device "gpu"'):
        jostle.pack_circles([1, 2, 3], time=1, device="gpu")
    with pytest.raises(jostle.InputError, match="must be >= 0"):
        jostle.pack_circles([1, 2, 3], time=-1)
    with pytest.raises(jostle.InputError, match="radii"):
        jostle.pack_circles([[1, 2], [3, 4]], time=1)
    with pytest.raises(jostle.InputError, match="seed"):
        jostle.pack_circles([1, 2, 3], time=1, seed=-1)
    with pytest.raises(TypeError, match="progress"):
        jostle.pack_circles([1, 2, 3], time=1, progress=3)


def test_cuda_runs_on_a_device_or_raises():
    if jostle.cuda_device_count() > 0:
        p = jostle.pack_circles(range(1, 11), time=30, device="cuda",
                                target=jostle.circles_record(10) * (1 + 1e-9))
        assert p.device == "cuda" and abs(p.R / p.record - 1) < 1e-9
        return
    with pytest.raises(jostle.Error) as e:
        jostle.pack_circles([1, 2, 3], time=1, device="cuda")
    assert e.value.code == 4 and str(e.value)


def test_write_outputs(tmp_path):
    p = jostle.pack_circles(range(1, 6), time=5, target=jostle.circles_record(5) * (1 + 1e-9))
    paths = {k: tmp_path / ("c5." + k) for k in ("json", "svg", "txt")}
    p.write(json=paths["json"], svg=str(paths["svg"]), txt=paths["txt"])
    doc = json.loads(paths["json"].read_text())
    assert doc["R"] == p.R
    assert [c["r"] for c in doc["circles"]] == [1, 2, 3, 4, 5]
    # the run's own settings, as jostle circles writes them: the defaults,
    # which follow the population's size (8 members 0.02 apart from 256
    # candidates, else the 4 best distinct R)
    run = doc["run"]
    assert (run["mode"], run["adopt_by"]) == ("population", "uniform")
    assert (run["elite"], run["crowding"]) in ((4, 0), (8, 0.02))
    assert run["walk_k"] == 8 and run["tenure"] == 4 and 0 <= run["adoptions"] <= run["restarts"]
    # a device polishes beside its launches, the CPU after each
    assert run["polish"] == ("beside" if run["device"] == "cuda" else "after")
    assert paths["svg"].read_text().lstrip().startswith("<")
    assert len(paths["txt"].read_text().split("\n")) >= 5
    with pytest.raises(jostle.Error) as e:
        p.write(json=tmp_path / "no-such-folder" / "c5.json")
    assert "no-such-folder" in str(e.value) and e.value.code == 3


def test_progress_callable_sees_the_run_and_stops_it():
    seen = []

    def progress(info):
        seen.append(info)
        return len(seen) >= 2

    t0 = time.monotonic()
    p = jostle.pack_circles(range(1, 31), time=60, progress=progress)
    assert time.monotonic() - t0 < 20
    assert p.stopped_by == "signal"
    assert len(seen) == 2
    assert isinstance(seen[0], jostle.Progress)
    assert 0 < seen[0].time <= seen[1].time and seen[1].work >= seen[0].work > 0
    assert seen[1].best >= p.R
    assert_legal_circles(p.centres, p.radii, p.R)


def test_progress_exception_propagates():
    def progress(info):
        raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        jostle.pack_circles(range(1, 31), time=60, progress=progress)


def test_sigint_stops_the_search_and_returns_the_best():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    timer = threading.Timer(1.0, os.kill, args=(os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        p = jostle.pack_circles(range(1, 31), time=60)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - t0
    assert elapsed < 6, elapsed
    assert p.stopped_by == "signal"
    assert p.R > 0 and p.R >= jostle.circles_record(30) * (1 - 1e-9)
    assert_legal_circles(p.centres, p.radii, p.R)
