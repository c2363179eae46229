"""The cold build of the analysis columns: the fast text rules give what the lexicon reading gives (any case,
any characters), and round files read by worker processes give the rows this process would."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from ebtui.core.analysis import source_read
from ebtui.core.analysis.consistency_rules import classify_consistency
from ebtui.core.analysis.frame import _fw
from ebtui.core.analysis.source import FactsSource
from ebtui.core.frameworks import (
    CONSISTENCY_CUES,
    FRAMEWORK_LEXICON,
    SENTENCE_SPLIT,
    AnyOf,
    consistency_cues,
    framework_mentions,
)
from ebtui.core.store import ResultsStore
from tests.support.factories import open_store
from tests.support.sim_truth import default_truth, generate

#: characters re matches case-insensitively with an ASCII letter, spaces that are not " ", word characters
ODD = ["\u212a", "\u017f", "\u0131", "\u0130", "\u00a0", "\u2003", "é", "’", "—", "\u00df", "\n", "!", "?"]


def _texts(n: int, seed: int) -> list[str]:
    """Sentences of the benchmark's answers and the lexicons' own words, cased and salted at random."""
    from benchmarks.gen_store import SENTENCES

    rnd = random.Random(seed)
    words = [w for pats in (*FRAMEWORK_LEXICON.values(), *CONSISTENCY_CUES.values()) for p in pats
             for w in p.replace("\\b", "").replace("\\w*", "").split() if w.isalpha()]
    out = []
    for _ in range(n):
        parts = [rnd.choice(SENTENCES) if rnd.random() < 0.6 else " ".join(rnd.choices(words, k=4)) + rnd.choice(".!? ")
                 for _ in range(rnd.randint(1, 8))]
        chars = []
        for c in " ".join(parts):
            x = rnd.random()
            chars.append(c.upper() if x < 0.1 else rnd.choice(ODD) if x < 0.13 else c + rnd.choice(ODD) if x < 0.15 else c)
        out.append("".join(chars))
    return out


def test_any_of_finds_what_the_exact_pattern_finds() -> None:
    for pats in (*FRAMEWORK_LEXICON.values(), *CONSISTENCY_CUES.values()):
        any_ = AnyOf(pats)
        assert any_.scan is not None  # the lexicons are lower case: the fast scan is used
        for text in _texts(150, seed=len(pats)):
            want, got = any_.exact.search(text), any_.search(text)
            assert (want and (want.span(), want.group(0))) == (got and (got.span(), got.group(0))), text


def test_framework_bits_quotes_and_classes_equal_the_lexicon_reading() -> None:
    for text in _texts(400, seed=7):
        found = framework_mentions(text)
        bits, quotes = _fw(text)
        assert quotes == {fw: hits[0].sentence for fw, hits in found.items() if hits}, text
        assert bits == sum(1 << k for k, hits in enumerate(found.values()) if hits)
        cues = consistency_cues(text)
        label = next((k for k in ("acknowledged_refinement", "relevant_difference", "inconsistent_unacknowledged",
                                  "kept_principle") if cues[k]), "unclassified")
        c = classify_consistency(text)
        hits = cues.get(label, [])
        assert (c.label, c.evidence, c.cues) == (label, [h.sentence for h in hits], [h.cue for h in hits]), text


def test_sentences_are_cut_where_the_split_pattern_cuts() -> None:
    rnd = random.Random(3)
    for _ in range(3000):
        text = "".join(rnd.choice("ab .!?\n \t\u00a0x") for _ in range(rnd.randint(0, 30)))
        starts = [m.start() for m in SENTENCE_SPLIT.finditer(text)]
        bounds = [0, *[m.end() for m in SENTENCE_SPLIT.finditer(text)]]
        for pos, c in enumerate(text):
            if not c.isspace():  # (a match never starts on a space)
                i = max(k for k, b in enumerate(bounds) if b <= pos)
                end = min([s for s in starts if s > pos], default=len(text))
                want = text[bounds[i]:end].strip()
                assert _sentence_of(text, pos) == want


def _sentence_of(text: str, pos: int) -> str:
    from ebtui.core.analysis.text_facts import sentence_around as _sentence_around

    return _sentence_around(text, pos)


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    s = open_store(tmp_path / "store")
    for r in generate(default_truth(), dilemmas=4, seed=2)[:40]:
        s.save_round(r)
    s.flush()
    (Path(s.rounds_dir) / "broken.json").write_text("{not a round")
    return s


def _files(store: ResultsStore) -> list[list[str]]:
    paths = sorted(str(p) for p in Path(store.rounds_dir).glob("*.json"))
    return [paths[i:i + 6] for i in range(0, len(paths), 6)]


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "fresh interpreters"])
def test_worker_processes_give_the_rows_this_process_gives(store: ResultsStore, monkeypatch: pytest.MonkeyPatch,
                                                           fork: bool) -> None:
    chunks = _files(store)
    here = list(source_read.read_files(chunks))
    monkeypatch.setattr(source_read, "PARALLEL_FROM", 1)
    monkeypatch.setattr(source_read, "FORK", fork and source_read.FORK)
    monkeypatch.setattr(source_read.threading, "active_count", lambda: 1)  # (as in `ebtui report`)
    monkeypatch.setattr(source_read.os, "sched_getaffinity", lambda _pid: {0, 1, 2}, raising=False)
    spawned: list[object] = []
    real = source_read.start_worker
    monkeypatch.setattr(source_read, "start_worker", lambda chunks, tasks: spawned.append(chunks) or real(chunks, tasks))
    shared = list(source_read.read_files(chunks))
    assert len(spawned) == 2  # two workers beside this process
    assert [n for _, n in shared] == [n for _, n in here] and sum(n for _, n in here) == 41  # the broken file was read
    for (a, _), (b, _) in zip(here, shared, strict=True):
        assert a.equals(b)
    assert sum(t.num_rows for t, _ in here) == 40


def test_a_failing_worker_leaves_the_files_to_this_process(store: ResultsStore, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = _files(store)
    here = list(source_read.read_files(chunks))
    monkeypatch.setattr(source_read, "PARALLEL_FROM", 1)
    monkeypatch.setattr(source_read, "FORK", False)
    monkeypatch.setattr(source_read.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(sys, "executable", sys.executable + "-missing")  # the worker cannot start
    got = list(source_read.read_files(chunks))
    assert [t.num_rows for t, _ in got] == [t.num_rows for t, _ in here]


@pytest.mark.skipif(not source_read.FORK, reason="workers are forks on Linux only")
def test_a_forked_worker_that_dies_leaves_the_files_to_this_process(store: ResultsStore,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = _files(store)
    here = list(source_read.read_files(chunks))
    monkeypatch.setattr(source_read, "PARALLEL_FROM", 1)
    monkeypatch.setattr(source_read.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)

    def dies(paths: object, tasks: object, out: object) -> None:
        raise SystemExit(3)  # (in the child: it leaves by os._exit, the parent sees its stream end)

    monkeypatch.setattr(source_read, "_serve", dies)
    monkeypatch.setattr(source_read.threading, "active_count", lambda: 1)
    got = list(source_read.read_files(chunks))
    assert [t.num_rows for t, _ in got] == [t.num_rows for t, _ in here]


def test_a_process_with_other_threads_starts_fresh_interpreters(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    started: list[str] = []
    monkeypatch.setattr(source_read, "FORK", True)
    monkeypatch.setattr(source_read, "_forked", lambda chunks, tasks: started.append("fork"))
    monkeypatch.setattr(source_read, "_spawned", lambda chunks, tasks: started.append("fresh"))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    base = threading.active_count()
    source_read.start_worker([], 0)
    other.start()
    try:
        source_read.start_worker([], 0)
    finally:
        stop.set()
        other.join()
    assert started == ["fork" if base == 1 else "fresh", "fresh"]


def test_a_cold_build_with_workers_gives_the_facts_of_one_without(store: ResultsStore,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    one = FactsSource(store).facts()
    FactsSource(store).path.unlink()
    monkeypatch.setattr(source_read, "PARALLEL_FROM", 1)
    monkeypatch.setattr(source_read, "CHUNK", 7)
    monkeypatch.setattr(source_read.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    spawned: list[object] = []
    real = source_read.start_worker
    monkeypatch.setattr(source_read, "start_worker", lambda chunks, tasks: spawned.append(chunks) or real(chunks, tasks))
    src = FactsSource(ResultsStore(store.root))
    two = src.facts()
    assert spawned and src.last_sync["rebuilt"] and src.last_sync["from_files"] == 40
    assert one.id.tolist() == two.id.tolist()
    for name in ("parsed", "effective", "text_len", "fw_bits", "reused", "ts"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))
    assert one.cls.tolist() == two.cls.tolist()
    assert one.quotes_of(np.arange(len(one))) == two.quotes_of(np.arange(len(two)))


def test_the_tasks_pipe_hands_out_each_chunk_once_then_says_done() -> None:
    tasks = source_read._Tasks(10)
    try:
        assert [tasks.take() for _ in range(11)] == [*range(10), None]
        assert tasks.take() is None  # (never blocks once empty)
    finally:
        tasks.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's 64 KiB pipes")
def test_more_chunks_than_a_pipe_holds_are_read_here(store: ResultsStore, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(OSError):
        source_read._Tasks(1 << 20)  # (4 MiB of chunk numbers: refused at once, not a writer waiting forever)
    chunks = _files(store)
    here = list(source_read.read_files(chunks))
    monkeypatch.setattr(source_read, "PARALLEL_FROM", 1)
    monkeypatch.setattr(source_read.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(source_read._Tasks, "__init__", lambda self, count: (_ for _ in ()).throw(OSError("small")))
    started: list[object] = []
    monkeypatch.setattr(source_read, "start_worker", lambda chunks, tasks: started.append(chunks))
    got = list(source_read.read_files(chunks))
    assert not started and [t.num_rows for t, _ in got] == [t.num_rows for t, _ in here]
