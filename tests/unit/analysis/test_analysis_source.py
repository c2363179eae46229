"""The analysis columns beside the store (ebtui.core.analysis.source): the same report as from the rounds,
kept in step with saves and overrides made by this store instance or another one, rebuilt when lost."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ebtui.core.analysis.frame import Facts, _fw
from ebtui.core.analysis.source import FactsSource
from ebtui.core.frameworks import framework_mentions
from ebtui.core.report import build_report_data
from ebtui.core.store import ResultsStore
from tests.support.factories import open_store
from tests.support.sim_truth import default_truth, generate


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    s = open_store(tmp_path / "store")
    rounds = generate(default_truth(), dilemmas=4, seed=1)[:60]
    rounds[3].phases[0].response = ("We weigh the greatest good for the greatest number. Our duty to the "
                                    "patient comes first.\nA virtuous person would listen.")
    for r in rounds:
        s.save_round(r)
    s.flush()
    return s


def _same(a: object, b: object) -> bool:
    """Equal JSON, floats to 1e-9 (sums in another memory layout may differ in the last bit)."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_the_columns_give_the_report_the_rounds_give(store: ResultsStore) -> None:
    src = FactsSource(store)
    facts = src.facts()
    assert src.last_sync["rebuilt"] and src.last_sync["from_files"] == 60
    assert (Path(store.root) / "columns" / "facts.parquet").is_file()
    rounds = store.load_rounds()
    assert facts.id.tolist() == [r.id for r in rounds]
    assert _same(build_report_data(facts).json(), build_report_data(rounds).json())
    fresh = FactsSource(ResultsStore(store.root))  # a fresh process: read from the file
    again = fresh.facts(dilemma="d2")
    assert not fresh.last_sync["index_read"]  # nothing changed since the columns were checked: no index read
    assert again.id.tolist() == [r.id for r in rounds if r.dilemma_id == "d2"]
    np.testing.assert_array_equal(again.parsed, facts.parsed[[r.dilemma_id == "d2" for r in rounds]])
    assert _same(build_report_data(fresh.facts()).json(), build_report_data(rounds).json())  # quotes from the file


def test_an_override_by_another_process_is_read_from_its_file_alone(store: ResultsStore) -> None:
    src = FactsSource(store)
    src.facts()
    other = open_store(store.root)  # what `ebtui rounds override` does in its own process
    rid = store.load_rounds()[5].id
    other.apply_override(rid, "a", "consistency", 1, note="too generous")
    other.close()
    store.refresh()
    facts = src.facts()
    assert src.last_sync == {"rebuilt": False, "from_hook": 0, "from_files": 1, "dropped": 0, "index_read": True}
    i = facts.id.tolist().index(rid)
    assert facts.effective[i, 0, 1] == 1 and facts.parsed[i, 0, 1] != 1
    rounds = store.load_rounds()
    data = build_report_data(facts)
    assert data.with_overrides is not None and data.judge_vs_human is not None
    assert _same(data.json(), build_report_data(rounds).json())


def test_a_save_in_this_process_comes_through_the_hook(store: ResultsStore) -> None:
    src = FactsSource(store)
    src.facts()
    rid = store.load_rounds()[7].id
    store.apply_override(rid, "b", "consistency", 2)
    facts = src.facts()
    assert src.last_sync["from_hook"] == 1 and src.last_sync["from_files"] == 0
    assert facts.effective[facts.id.tolist().index(rid), 1, 1] == 2


def test_a_deleted_round_leaves_and_a_lost_or_damaged_file_is_rebuilt(store: ResultsStore) -> None:
    src = FactsSource(store)
    src.facts()
    gone = store.load_rounds()[0].id
    os.unlink(store.round_path(gone))
    store.refresh()
    assert gone not in src.facts().id.tolist() and src.last_sync["dropped"] == 1
    src.path.write_bytes(b"not parquet")
    fresh = FactsSource(ResultsStore(store.root))
    assert len(fresh.facts()) == 59 and fresh.last_sync["rebuilt"]


def test_framework_facts_equal_the_lexicon_reading() -> None:
    from benchmarks.gen_store import SENTENCES

    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(SENTENCES, 6)) + "\n" + " ".join(rng.choice(SENTENCES, 3)) for _ in range(40)]
    texts += ["Kantian duties? Utilitarian!\n\nNo framework here.", "", "care ethics and the relationships"]
    for text in texts:
        found = framework_mentions(text)
        bits, quotes = _fw(text)
        assert quotes == {fw: hits[0].sentence for fw, hits in found.items() if hits}
        assert bits == sum(1 << k for k, hits in enumerate(found.values()) if hits)


def test_facts_take_keeps_rows_and_quotes(store: ResultsStore) -> None:
    facts = Facts.from_rounds(store.load_rounds())
    sub = facts.take(np.array([3, 1]))
    assert sub.id.tolist() == [facts.id[3], facts.id[1]]
    assert "consequentialist" in sub.quotes([0])[0]["presentation"]
