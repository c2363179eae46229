"""The Henderson III fits of ebtui.core.analysis.variance made faster without changing a float: X'X of an
indicator design from counts (`indicator_gram`), and one estimation's fits shared with a fork of the process
(`shared`: the same code on the same arrays, so the same floats to the bit). A cold report makes two
estimations of ~5 dense fits each before their cache (variance_cache) exists."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")
R = TypeVar("R")

#: the fits of one estimation are shared with a forked process (Linux, no other Python thread) from this much
#: work on (rows x columns^2 + columns^3, summed over the fits: ~0.1 s of one core)
FORK_FITS_FROM = 3e8
#: ... while this process holds less than this much memory (a fork's pages are shared with this process, but
#: tools that add up the processes' resident sizes count them twice)
FORK_FITS_BELOW_RSS = 600 * 2**20
#: the factors an exchange-absorbing fit leaves to the exchange indicators
NESTED = ("exchange", "dilemma", "model_dilemma")


def indicator_gram(fixed: np.ndarray, factors: Sequence[tuple[np.ndarray, int]]) -> np.ndarray | None:
    """X'X of X = [fixed, the factors' indicator columns (codes, levels)], from counts instead of a dense
    product — the same matrix to the bit: every entry is a sum of products of small whole numbers, which floats
    hold exactly whatever the order of the additions (so BLAS's X.T @ X gives exactly these counts too). None
    when a fixed column holds anything but -1, 0 or 1 (then only the product says what the floats are)."""
    n, f = fixed.shape
    if n >= 2**52 or not np.array_equal(fixed, np.trunc(fixed)) or np.abs(fixed).max(initial=0.0) > 1.0:
        return None
    starts = np.cumsum([f, *(k for _, k in factors)])
    G = np.zeros((int(starts[-1]), int(starts[-1])))
    G[:f, :f] = fixed.T @ fixed
    for a, (codes_a, k_a) in enumerate(factors):
        s_a = int(starts[a])
        block = np.zeros((k_a, f))
        np.add.at(block, codes_a, fixed)  # each level's sums of the fixed columns (whole numbers: exact)
        G[s_a:s_a + k_a, :f] = block
        G[:f, s_a:s_a + k_a] = block.T
        G[s_a:s_a + k_a, s_a:s_a + k_a] = np.diag(np.bincount(codes_a, minlength=k_a).astype(float))
        for b in range(a + 1, len(factors)):
            codes_b, k_b = factors[b]
            s_b = int(starts[b])
            cross = np.bincount(codes_a.astype(np.int64) * k_b + codes_b, minlength=k_a * k_b).reshape(k_a, k_b)
            G[s_a:s_a + k_a, s_b:s_b + k_b] = cross
            G[s_b:s_b + k_b, s_a:s_a + k_a] = cross.T
    return G


def fit_cost(rows: int, fixed: int, levels: Sequence[int], absorb_exchange: bool) -> float:
    """About how much work one fit is (its design's rows x columns^2 + columns^3): `fixed` columns and the
    included factors' `levels` (without those the exchanges absorb, when they do)."""
    p = fixed - (1 if absorb_exchange else 0) + sum(levels)
    return float(rows * p * p + p * p * p)


def fitted(fit: Callable[[tuple[list[str], bool]], R], fits: Sequence[tuple[list[str], bool]], fixed: np.ndarray,
           codes: dict[str, tuple[np.ndarray, int]]) -> list[R]:
    """`fit` of each of an estimation's fits (included factors, whether the exchanges absorb the rest), in
    order, shared with a fork (`shared`) by their cost."""
    costs = [fit_cost(fixed.shape[0], fixed.shape[1], [codes[f][1] for f in inc if not (ab and f in NESTED)], ab)
             for inc, ab in fits]
    return shared(fit, fits, costs)


def shared(work: Callable[[T], R], items: Sequence[T], costs: Sequence[float]) -> list[R]:
    """`work(item)` of each item, in order: the largest in this process, the others meanwhile in a fork of it
    (the same code on the same arrays: the same floats, to the bit) when they are FORK_FITS_FROM of work and a
    fork is safe here (`forkable`); else one after another here. A fork that fails leaves its items here."""
    if len(items) < 2 or sum(costs) < FORK_FITS_FROM or not forkable():
        return [work(x) for x in items]
    mine: list[int] = []
    theirs: list[int] = []
    load = [0.0, 0.0]
    for i in sorted(range(len(items)), key=lambda i: -costs[i]):  # (the larger first, to the less loaded)
        side = 0 if load[0] <= load[1] else 1
        (mine if side == 0 else theirs).append(i)
        load[side] += costs[i]
    child = Forked(lambda: [work(items[i]) for i in theirs])
    try:
        out: dict[int, R] = {i: work(items[i]) for i in mine}
        got = child.result()
    finally:
        child.stop()
    for k, i in enumerate(theirs):
        out[i] = got[k] if got is not None else work(items[i])
    return [out[i] for i in range(len(items))]


def forkable() -> bool:
    """A fork of this process may compute here (ahead.safe_to_fork: Linux, no other Python thread, a process
    under FORK_FITS_BELOW_RSS) and no fork computes a report's pieces ahead (ahead.busy: it has the other core;
    nor in that fork itself)."""
    from ebtui.core.analysis.ahead import busy, safe_to_fork

    return not busy() and safe_to_fork(FORK_FITS_BELOW_RSS)


class Forked:
    """`work()` computed in a fork of this process, its (pickled) result read back by `result()`; None when the
    child failed (it then leaves without a result, and the caller computes it)."""

    def __init__(self, work: Callable[[], object]) -> None:
        import os
        import pickle

        r, w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: compute, answer, leave without running anything of the parent's
            code = 1
            try:
                os.close(r)
                data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
                with open(w, "wb") as out:
                    out.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        self.fh = open(r, "rb")  # noqa: SIM115 (closed by stop)

    def result(self) -> Any:
        import os
        import pickle

        data = self.fh.read()
        _pid, status = os.waitpid(self.pid, 0)
        self.pid = 0
        if not data or os.waitstatus_to_exitcode(status) != 0:
            return None
        return pickle.loads(data)

    def stop(self) -> None:
        import contextlib
        import os
        import signal

        if self.pid:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)
            self.pid = 0
        self.fh.close()
