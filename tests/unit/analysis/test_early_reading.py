"""A first build's reading started before the store's index is read (`FactsSource.prefetch`): the workers read
the files the rounds folder lists, and the sync keeps the rows of the rounds the index names — the facts a build
without it gives, whatever else lies in the folder and whatever was saved after the listing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from ebtui.core.analysis import source_read
from ebtui.core.analysis.frame import Facts
from ebtui.core.analysis.source import FactsSource
from ebtui.core.store import ResultsStore
from tests.support.factories import open_store
from tests.support.sim_truth import default_truth, generate

ROUNDS = generate(default_truth(), dilemmas=4, seed=3)[:45]


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    s = open_store(tmp_path / "store")
    for r in ROUNDS[:40]:
        s.save_round(r)
    s.flush()
    rounds = Path(s.rounds_dir)
    shutil.copy(rounds / f"{ROUNDS[0].id}.json", rounds / "zz-copy-under-another-name.json")  # (the store indexes no round by this name)
    (rounds / "broken.json").write_text("{not a round")
    (rounds / "a-folder.json").mkdir()
    if hasattr(os, "mkfifo"):
        os.mkfifo(rounds / "a-pipe.json")  # (a reader that opened it blocking would wait for ever)
    return s


@pytest.fixture
def workers(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Worker processes for a handful of files (as `ebtui report` starts them for thousands)."""
    monkeypatch.setattr(source_read, "PARALLEL_FROM", 1)
    monkeypatch.setattr(source_read, "CHUNK", 7)
    monkeypatch.setattr(source_read.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(source_read.threading, "active_count", lambda: 1)
    started: list[object] = []
    real = source_read.start_worker
    monkeypatch.setattr(source_read, "start_worker", lambda chunks, tasks: started.append(chunks) or real(chunks, tasks))
    return started


def _same(one: Facts, two: Facts) -> None:
    assert one.id.tolist() == two.id.tolist()
    for name in ("parsed", "effective", "text_len", "fw_bits", "reused", "ts", "style"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))
    assert one.cls.tolist() == two.cls.tolist() and one.round.tolist() == two.round.tolist()


def _reference(root: Path) -> tuple[Facts, list[str | None]]:
    """The facts (and quotes) of a first build without an early reading (in this process), the columns file
    then removed."""
    src = FactsSource(ResultsStore(root))
    facts = src.facts()
    quotes = facts.quotes_of(np.arange(len(facts)))
    src.path.unlink()
    src.check_path.unlink(missing_ok=True)
    return facts, quotes


def test_an_early_reading_gives_the_facts_of_a_build_without_it(store: ResultsStore, workers: list[object]) -> None:
    src = FactsSource(ResultsStore(store.root))
    assert src.prefetch() and workers  # (started before the index is read)
    later = open_store(Path(store.root))
    for r in ROUNDS[40:]:  # saved after the folder was listed: the sync reads them itself
        later.save_round(r)
    later.flush()
    got = src.facts()
    assert src.last_sync["rebuilt"] and src.last_sync["from_files"] == 45
    assert src._early is None
    quotes = got.quotes_of(np.arange(len(got)))
    src.close()
    expected, expected_quotes = _reference(Path(store.root))
    assert len(set(expected.round.tolist())) == 45
    _same(expected, got)
    assert quotes == expected_quotes


def test_no_early_reading_where_the_columns_are_there_or_the_files_few(store: ResultsStore,
                                                                       workers: list[object],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    FactsSource(ResultsStore(store.root)).facts()
    workers.clear()
    assert not FactsSource(ResultsStore(store.root)).prefetch()  # the columns file is there
    monkeypatch.setattr(source_read, "PARALLEL_FROM", 1000)
    FactsSource(store).path.unlink()
    assert not FactsSource(ResultsStore(store.root)).prefetch()  # too few files for workers
    assert not workers


def test_an_early_reading_a_sync_does_not_take_is_stopped(store: ResultsStore, workers: list[object]) -> None:
    src = FactsSource(ResultsStore(store.root))
    assert src.prefetch()
    early = src._early
    assert early is not None and early.reading.workers
    FactsSource(ResultsStore(store.root)).facts()  # another process writes the columns meanwhile
    src.facts()  # reads that file: the reading is not needed
    assert src._early is None and not early.reading.workers
    src2 = FactsSource(ResultsStore(store.root))
    src2.path.unlink()
    assert src2.prefetch()
    kept = src2._early
    src2.close()
    assert kept is not None and not kept.reading.workers


def test_a_table_in_another_order_gives_the_facts_in_query_order(store: ResultsStore) -> None:
    src = FactsSource(ResultsStore(store.root))
    want = src.facts()
    want_quotes = want.quotes_of(np.arange(len(want)))
    assert src._table is not None
    table = src._table.append_column("quotes", src._all_quotes())
    perm = np.random.default_rng(1).permutation(table.num_rows)
    src._set_table(table.take(perm).drop_columns(["quotes"]))  # (as a first build in the folder's order leaves it)
    src._quotes = table.take(perm).column("quotes")
    got = src.facts()
    _same(want, got)
    assert got.quotes_of(np.arange(len(got))) == want_quotes
    sub = src.facts(dilemma=str(want.dilemma[0]))  # some of the rows: Arrow's take, as before
    assert sub.id.tolist() == [i for i, d in zip(want.id.tolist(), want.dilemma.tolist(), strict=True) if d == want.dilemma[0]]


def test_the_columns_modules_import_without_the_statistics() -> None:
    """A first build's workers fork once the columns' modules are imported: the analysis package's names load on
    first use, so scipy and the statistics wait (and every exported name is its module's object)."""
    import importlib
    import subprocess
    import sys

    import ebtui.core.analysis as an
    from tests.support.paths import subprocess_env

    code = "import sys, ebtui.core.analysis.source; print(sorted(m for m in ('scipy', 'ebtui.core.analysis.results') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), check=True)
    assert out.stdout.strip() == "[]"
    importlib.import_module("ebtui.core.analysis.fit")  # (the submodule of the same name as the function)
    assert callable(an.fit) and an.fit.__module__ == "ebtui.core.analysis.fit"
    for name in an.__all__:
        assert getattr(an, name) is getattr(importlib.import_module(an._WHERE.get(name, "ebtui.core.analysis.fit")), name)
    assert an.tables.__name__ == "ebtui.core.analysis.tables"  # (a submodule by attribute, as before)
    with pytest.raises(AttributeError):
        _ = an.no_such_name
