"""Checks shared by the circle tests."""

import numpy as np


def assert_legal_circles(centres, radii, R, rel_tol=1e-9):
    """No two circles overlap and every circle lies in the container of radius
    R around the origin, within rel_tol of R (the library's exact check allows
    1e-10 R)."""
    c = np.asarray(centres)
    r = np.asarray(radii)
    n = len(r)
    assert c.shape == (n, 2)
    tol = rel_tol * R
    assert np.all(np.hypot(c[:, 0], c[:, 1]) + r <= R + tol)
    d = np.hypot(c[:, None, 0] - c[None, :, 0], c[:, None, 1] - c[None, :, 1])
    need = r[:, None] + r[None, :]
    off = ~np.eye(n, dtype=bool)
    assert np.all(d[off] >= need[off] - tol), "overlap %g" % np.max((need - d)[off])
