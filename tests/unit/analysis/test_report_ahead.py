"""A cold report computed with a fork working ahead (ebtui.core.analysis.ahead) prints the same `report --json`
text as the report computed in one process, on a generated store with re-judgments and overrides; a fork that
dies, or sends garbage, leaves its pieces to the process (the same text again); Ctrl-C (or any error) inside
the block kills the fork."""

from __future__ import annotations

import os
import pickle
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ebtui.core.analysis import ahead

CACHES = ("bias_section.json", "variance_components.json", "preferences.json")
#: the pieces a cold report with overrides computes ahead: preferences in both views, the components, the
#: descriptive tables, the section
PIECES = {"preferences.json": 2, "variance_components.json": 1, "descriptive tables": 1, "bias_section.json": 1}


@pytest.fixture(autouse=True)
def _any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork whatever this test process's size (an xdist worker that ran other tests is past the cap), and
    whatever idle threads earlier tests in this worker left (an event loop's executor): only the threads a test
    starts itself count against the fork (as every thread does in `ebtui report`, a process of its own)."""
    import threading

    monkeypatch.setattr(ahead, "FORK_BELOW_RSS", 2**40)
    before = {t.ident for t in threading.enumerate() if t is not threading.main_thread()}
    monkeypatch.setattr(threading, "active_count", lambda: 1 + sum(
        1 for t in threading.enumerate() if t is not threading.main_thread() and t.ident not in before))


def _report(root: Path) -> str:
    """`report --json`'s text, then every table as the Markdown report and the CSVs show it (titles, notes)."""
    from ebtui.core.usecases import report as uc
    from ebtui.core.usecases.context import open_context

    app = open_context(store=root)
    sel = uc.select(app)
    data = uc.build_report(sel, uc.families(app, sel.facts, explicit=False))
    shown = [(t.key, t.title, t.view, t.columns, t.rows, t.notes, t.coverage, sorted(t.text_columns))
             for ts in data.tables.values() for t in ts]
    return uc.report_json_text(sel, data) + "\n" + repr(shown)


def _cold(root: Path) -> None:
    for name in CACHES:
        (root / "columns" / name).unlink(missing_ok=True)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A generated store (re-judged rounds, three overrides) and its report computed in this process alone."""
    from benchmarks.gen_store import generate
    from ebtui.core.store import ResultsStore

    root = tmp_path_factory.mktemp("ahead") / "store"
    generate(root, 90, models=5, dilemmas=5, rejudged=0.3, seed=7)
    results = ResultsStore(root)
    for k, r in enumerate(results.load_rounds()[:3]):
        results.apply_override(r.id, "a", "consistency", k + 2, "test")
    mp = pytest.MonkeyPatch()
    mp.setattr(ahead, "blas_single_threaded", lambda: False)  # (no fork: the one-process report)
    serial = _report(root)
    mp.undo()
    yield root, serial


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Every piece the report asked the fork for, and whether the fork gave it."""
    got: list[tuple[str, bool]] = []
    take = ahead.Ahead.take

    def spy(self: ahead.Ahead, name: str, key: str) -> tuple[bool, Any]:
        found, value = take(self, name, key)
        got.append((name, found))
        return found, value

    monkeypatch.setattr(ahead.Ahead, "take", spy)
    monkeypatch.setattr(ahead, "AHEAD_FROM", 0)
    return got


def _counts(got: list[tuple[str, bool]], found: bool) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, f in got:
        if f == found:
            out[name] = out.get(name, 0) + 1
    return out


def test_the_fork_gives_the_report_of_one_process(store: tuple[Path, str], taken: list[tuple[str, bool]]) -> None:
    root, serial = store
    _cold(root)
    assert _report(root) == serial
    assert _counts(taken, True) == PIECES  # every piece came from the fork
    taken.clear()
    assert _report(root) == serial  # warm: read back from the caches the report wrote; the fork: only the tables
    assert _counts(taken, True) == {"descriptive tables": 1}


@pytest.mark.parametrize("after", [2])
def test_a_fork_that_dies_leaves_its_pieces_here(store: tuple[Path, str], taken: list[tuple[str, bool]],
                                                 monkeypatch: pytest.MonkeyPatch, after: int) -> None:
    """The fork dies (SIGKILL) after sending its plan and `after` pieces: those are used, the rest computed."""
    import signal

    serve = ahead._serve

    def dying(pieces: list[ahead.Piece], out: Any) -> int:
        class Cut:
            sent = 0

            def write(self, data: bytes) -> int:
                if self.sent > after:  # the plan, then `after` pieces
                    os.kill(os.getpid(), signal.SIGKILL)
                return int(out.write(data))

            def flush(self) -> None:
                self.sent += 1
                out.flush()

        return serve(pieces, Cut())

    monkeypatch.setattr(ahead, "_serve", dying)
    root, serial = store
    _cold(root)
    assert _report(root) == serial
    assert sum(_counts(taken, True).values()) == after  # (the others were computed here)


def test_a_fork_that_sends_garbage_leaves_its_pieces_here(store: tuple[Path, str], taken: list[tuple[str, bool]],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def garbage(pieces: list[ahead.Piece], out: Any) -> int:
        plans = [p() for p in pieces]
        plan = pickle.dumps(("plan", [(n, k) for n, k, _ in (p for p in plans if p)]))
        out.write(len(plan).to_bytes(8, "little") + plan)
        out.write((18).to_bytes(8, "little") + b"\x80\x05not a pickle at all")
        return 0

    monkeypatch.setattr(ahead, "_serve", garbage)
    root, serial = store
    _cold(root)
    assert _report(root) == serial
    assert _counts(taken, True) == {} and _counts(taken, False).keys() == PIECES.keys()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_an_interrupt_kills_the_fork() -> None:
    pids = []
    with pytest.raises(KeyboardInterrupt), ahead.computing_ahead([lambda: ("x", "k", lambda: time.sleep(60))]) \
            as forked:
        assert forked and ahead.busy()
        pids.append(ahead._ACTIVE[-1].pid)
        raise KeyboardInterrupt
    assert pids and not _alive(pids[0]) and not ahead.busy()


def test_no_fork_beside_another_thread_or_with_threaded_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    piece: ahead.Piece = lambda: ("x", "k", lambda: 1)  # noqa: E731
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        with ahead.computing_ahead([piece]) as forked:
            assert not forked and ahead.taken("x", "k") == (False, None)
    finally:
        stop.set()
        t.join()
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    with ahead.computing_ahead([piece]) as forked:
        assert not forked
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    with ahead.computing_ahead([piece]) as forked:  # and a piece outside the plan is computed here
        assert forked and ahead.taken("x", "k") == (True, 1) and ahead.taken("x", "other") == (False, None)


def test_a_fork_whose_plan_fails_computes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> ahead.Plan:
        raise RuntimeError("no plan")

    with ahead.computing_ahead([broken]) as forked:
        assert forked and ahead.taken("x", "k") == (False, None)


def test_no_fork_above_the_memory_cap_or_when_none_is_to_be_had(monkeypatch: pytest.MonkeyPatch) -> None:
    piece: ahead.Piece = lambda: ("x", "k", lambda: 1)  # noqa: E731
    monkeypatch.setattr(ahead, "FORK_BELOW_RSS", 1)
    with ahead.computing_ahead([piece]) as forked:
        assert not forked
    monkeypatch.setattr(ahead, "FORK_BELOW_RSS", 2**40)

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    with ahead.computing_ahead([piece]) as forked:
        assert not forked and not ahead.busy() and ahead.taken("x", "k") == (False, None)


def test_a_stuck_fork_is_given_up_on() -> None:
    """A fork that sends its plan and then nothing: after STALL_SECONDS the piece is computed here, and the
    fork is killed."""
    slow: ahead.Piece = lambda: ("x", "k", lambda: time.sleep(60))  # noqa: E731
    pids = []
    mp = pytest.MonkeyPatch()
    mp.setattr(ahead, "STALL_SECONDS", 0.3)
    try:
        with ahead.computing_ahead([slow]) as forked:
            assert forked
            pids.append(ahead._ACTIVE[-1].pid)
            t0 = time.monotonic()
            assert ahead.taken("x", "k") == (False, None)
            assert time.monotonic() - t0 < 5 and not _alive(pids[0])
    finally:
        mp.undo()


def test_an_absurd_length_is_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    def liar(pieces: list[ahead.Piece], out: Any) -> int:
        out.write((2**62).to_bytes(8, "little"))
        out.flush()
        time.sleep(60)
        return 0

    monkeypatch.setattr(ahead, "_serve", liar)
    with ahead.computing_ahead([lambda: ("x", "k", lambda: 1)]) as forked:
        assert forked and ahead.taken("x", "k") == (False, None) and not ahead._ACTIVE[-1].pid
