"""The judge-bias section's input from the analysis columns (ebtui.core.analysis.bias_source) equals the one
from whole rounds (judge_bias.long_table, bias_report.judge_bias_section), on generated stores: every judgment
in both reading orders, rotating judges, repeats, missing scores, a round whose own judgment failed but was
re-judged, a round without any judgment, judge panels sharing an exchange whose transcripts differ, human
overrides (the effective view), agreement data — read back from a real store's Parquet file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ebtui.core.analysis.bias_report import judge_bias_section
from ebtui.core.analysis.bias_source import (
    judge_bias_section_of_facts,
    long_table_of_facts,
    stand_in_rounds,
)
from ebtui.core.analysis.frame import Facts
from ebtui.core.analysis.judge_bias import judgment_counts, long_table
from ebtui.core.analysis.source import FactsSource
from ebtui.core.families import family_function
from ebtui.core.records import Judgment, Override, Round, Scores
from tests.support.factories import open_store
from tests.support.judge_bias_sim import default_bias_truth, generate

FAMILIES = {"m-alpha": "fam-1", "j-one": "fam-1", "m-beta": "fam-2", "j-two": "fam-2"}


def _awkward(rounds: list[Round]) -> list[Round]:
    """Edge cases added to a generated tournament (a copy)."""
    out = [r.model_copy(deep=True) for r in rounds]
    for r in (out[0], out[2], out[4]):  # re-judged (a design of one judgment per round has none yet)
        if not r.extra_judgments and r.judgment is not None:
            r.extra_judgments.append(r.judgment.model_copy(update={"key": "again-ba", "order": "ba",
                                                                   "origin": "rejudge", "judge_model": "j-three"}))
    # missing scores in a re-judgment and in an own judgment
    out[0].extra_judgments[0].team_a_scores.consistency = None
    assert out[1].judgment is not None
    out[1].judgment.team_b_scores = Scores()
    # the own judgment failed; a re-judgment exists
    out[2].judgment = None
    # no judgment at all
    out[3].judgment = None
    out[3].extra_judgments = []
    # a panel: a second round of out[4]'s exchange whose Team A text is longer (its style must not be used:
    # the exchange's first judged round gives the style, as long_table keeps it)
    panel = out[4].model_copy(deep=True, update={"id": out[4].id + "-panel", "judge_model": "j-two"})
    panel.phases[0].response += " extra words here **bold** and more"
    panel.extra_judgments = panel.extra_judgments[:1]
    out.insert(5, panel)
    # an override in force on one judgment (the effective view differs)
    j = out[6].judgment
    assert j is not None
    j.overrides.append(Override(team="a", criterion="consistency", value=2, parsed_value=j.team_a_scores.consistency,
                                note="human"))
    return out


def _equal_tables(a: Any, b: Any) -> None:
    for name, v in vars(a).items():
        w = getattr(b, name)
        if isinstance(v, np.ndarray):
            assert v.shape == w.shape, name
            np.testing.assert_array_equal(v, w, err_msg=name)
        else:
            assert v == w, name


@pytest.fixture(scope="module")
def designs() -> list[tuple[list[Round], dict[tuple[str, str], dict[str, bool | None]]]]:
    truth = default_bias_truth()
    out = []
    for kw in ({"dilemmas": 4, "seed": 1}, {"dilemmas": 5, "seed": 2, "rotate": True, "both_orders": False},
               {"dilemmas": 3, "seed": 3, "repeats": 2}):
        rounds, agreement = generate(truth, **kw)  # type: ignore[arg-type]
        out.append((_awkward(rounds), agreement))
    return out


def test_long_table_of_facts_equals_long_table(designs: Any) -> None:
    fam = family_function(FAMILIES)
    for rounds, agreement in designs:
        facts = Facts.from_rounds(rounds)
        for effective in (False, True):
            for agr in (agreement, None):
                _equal_tables(long_table(rounds, fam, agreement=agr, effective=effective),
                              long_table_of_facts(facts, fam, agreement=agr, effective=effective))
        assert judgment_counts(stand_in_rounds(facts)) == judgment_counts(rounds)


def test_the_section_parts_from_the_columns_equal_the_ones_from_rounds(designs: Any) -> None:
    """Reliability (alpha per criterion, test-retest, the criteria's correlations), the flip rates and the
    judgment counts from the columns' arrays: the numbers the round-based functions give, bit for bit."""
    from ebtui.core.analysis.bias_source import (
        _winners,
        flip_rates_of_facts,
        judgment_counts_of_facts,
        order_counts_of_facts,
        reliability_of_facts,
    )
    from ebtui.core.analysis.judge_bias import flip_rates, flip_rows, order_counts
    from ebtui.core.analysis.reliability import reliability_json

    flipped: list[bool] = []
    for rounds, _ in designs:
        facts = Facts.from_rounds(rounds)
        got = reliability_of_facts(facts, seed=5, replicates=80)
        assert json.dumps(got, sort_keys=True) == json.dumps(reliability_json(rounds, seed=5, replicates=80),
                                                             sort_keys=True)
        want = flip_rates(rounds, seed=5, replicates=80)
        assert flip_rows(_winners(facts), seed=5, replicates=80) == want
        assert flip_rates_of_facts(facts, seed=5, replicates=80) == want
        flipped.append(bool(want))
        assert judgment_counts_of_facts(facts) == judgment_counts(rounds)
        assert order_counts_of_facts(facts) == dict(order_counts(rounds))
    # designs in both orders have flip rates, the one with repeats a test-retest, to compare
    assert any(flipped) and any(r["alpha_mean_of_criteria"] is not None for r in got["test_retest"])


def test_through_a_store_the_section_equals_the_one_from_whole_rounds(designs: Any, tmp_path: Path) -> None:
    rounds, agreement = designs[0]
    store = open_store(tmp_path / "store")
    for r in rounds:
        store.save_round(r)
    store.flush()
    src = FactsSource(store)
    src.facts()
    facts = FactsSource(type(store)(store.root)).facts()  # a fresh process: read back from the Parquet file
    loaded = store.load_rounds()
    assert facts.round.tolist()[:1] == [loaded[0].id]
    fam = family_function(FAMILIES)
    _equal_tables(long_table(loaded, fam, agreement=agreement), long_table_of_facts(facts, fam, agreement=agreement))
    got = judge_bias_section_of_facts(facts, families=FAMILIES, agreement=agreement, replicates=60)
    want = judge_bias_section(loaded, families=FAMILIES, agreement=agreement, replicates=60)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_a_stand_in_text_measures_as_the_style_it_stands_for() -> None:
    from ebtui.core.analysis.bias_source import _text_of_style
    from ebtui.core.analysis.style import text_style

    for words in range(0, 12):
        for elements in range(0, 3 * words + 1):
            st = text_style(_text_of_style(words, elements))
            assert (st.words, st.format_elements) == (words, elements)


def test_the_style_facts_are_what_style_py_measures() -> None:
    from ebtui.core.analysis.style import team_style

    rounds, _ = generate(default_bias_truth(), dilemmas=2, seed=4)
    facts = Facts.from_rounds(rounds[:5])
    for i, rid in enumerate(facts.round.tolist()):
        r = next(x for x in rounds if x.id == rid)
        want = [v for t in ("a", "b") for v in (team_style(r, t).words, team_style(r, t).format_elements)]
        assert facts.style[i].tolist() == want
    # a judgment's order and origin are its own
    r = rounds[0]
    rows = [i for i, rid in enumerate(facts.round.tolist()) if rid == r.id]
    assert [str(facts.order[i]) for i in rows] == [j.order for j in r.all_judgments()]
    assert [str(facts.origin[i]) for i in rows] == [j.origin for j in r.all_judgments()]
    assert isinstance(r.extra_judgments[0], Judgment)


def test_the_cached_preferences_are_the_fits_and_follow_their_inputs(designs: Any, tmp_path: Path) -> None:
    """section 2's self and same-family preferences read back from columns/preferences.json only while the
    rows, the view's scores, the families, seed and replicates are the same (the same floats, to the bit)."""
    from ebtui.core.analysis.bias_source import PREFERENCES_FILE, cached_preferences, preferences_of_facts
    from ebtui.core.families import family_function

    rounds, _ = designs[1]
    facts = Facts.from_rounds(rounds)

    def fresh(f: Facts, fams: Any, effective: bool = False) -> str:
        return json.dumps(preferences_of_facts(f, family_function(fams), effective=effective, replicates=40))

    first = cached_preferences(tmp_path, facts, families=FAMILIES, replicates=40)
    assert (tmp_path / PREFERENCES_FILE).is_file()
    assert json.dumps(first) == fresh(facts, FAMILIES)
    assert any(p["estimate"] is not None for p in first)
    stamp = (tmp_path / PREFERENCES_FILE).stat().st_mtime_ns
    assert json.dumps(cached_preferences(tmp_path, facts, families=FAMILIES, replicates=40)) == json.dumps(first)
    assert (tmp_path / PREFERENCES_FILE).stat().st_mtime_ns == stamp
    fewer = facts.take(np.arange(len(facts)) >= 10)
    changed = facts.take(np.arange(len(facts)))
    changed.parsed = changed.parsed.copy()
    flat = changed.parsed.reshape(-1)  # (a view of the copy)
    flat[np.flatnonzero(flat > 1)[:50]] -= 1  # other scores, the same rows
    for f, fams, eff in ((fewer, FAMILIES, False), (facts, None, False), (facts, FAMILIES, True),
                         (changed, FAMILIES, False)):
        assert json.dumps(cached_preferences(tmp_path, f, families=fams, effective=eff, replicates=40)) == \
            fresh(f, fams, eff)
    assert fresh(changed, FAMILIES) != json.dumps(first)
    assert json.dumps(cached_preferences(tmp_path, facts, families=FAMILIES, replicates=40)) == json.dumps(first)
    assert cached_preferences(None, facts, families=FAMILIES, replicates=40) == first


def test_the_cached_section_is_the_section_and_follows_its_inputs(designs: Any, tmp_path: Path) -> None:
    from ebtui.core.analysis.bias_source import cached_section

    rounds, agreement = designs[1]
    facts = Facts.from_rounds(rounds)
    want = judge_bias_section_of_facts(facts, families=FAMILIES, agreement=agreement, replicates=40)
    first = cached_section(tmp_path, facts, families=FAMILIES, agreement=agreement, replicates=40)
    assert (tmp_path / "bias_section.json").is_file()
    again = cached_section(tmp_path, facts, families=FAMILIES, agreement=agreement, replicates=40)
    assert json.dumps(first, sort_keys=True) == json.dumps(want, sort_keys=True) == json.dumps(again, sort_keys=True)
    # other rows, families or agreement: recomputed, not read back
    fewer = facts.take(np.arange(len(facts)) >= 10)
    for got, expect in (
        (cached_section(tmp_path, fewer, families=FAMILIES, agreement=agreement, replicates=40),
         judge_bias_section_of_facts(fewer, families=FAMILIES, agreement=agreement, replicates=40)),
        (cached_section(tmp_path, facts, families=None, agreement=agreement, replicates=40),
         judge_bias_section_of_facts(facts, families=None, agreement=agreement, replicates=40)),
        (cached_section(tmp_path, facts, families=FAMILIES, agreement=None, replicates=40),
         judge_bias_section_of_facts(facts, families=FAMILIES, agreement=None, replicates=40)),
    ):
        assert json.dumps(got, sort_keys=True) == json.dumps(expect, sort_keys=True)
    assert json.dumps(cached_section(tmp_path, fewer, families=FAMILIES, agreement=agreement, replicates=40),
                      sort_keys=True) != json.dumps(first, sort_keys=True)


def test_a_filtered_report_does_not_evict_the_whole_reports_section(designs: Any, tmp_path: Path,
                                                                    monkeypatch: Any) -> None:
    """bias_section.json keeps the newest few sections: the report of every round, then one of a model, then
    every round again reads the first back without refitting."""
    from ebtui.core.analysis import bias_source
    from ebtui.core.analysis.bias_source import cached_section

    rounds, agreement = designs[1]
    facts = Facts.from_rounds(rounds)
    fewer = facts.take(np.arange(len(facts)) >= 10)
    first = cached_section(tmp_path, facts, families=FAMILIES, agreement=agreement, replicates=40)
    cached_section(tmp_path, fewer, families=FAMILIES, agreement=agreement, replicates=40)
    fitted: list[int] = []
    real = bias_source.judge_bias_section_of_facts
    monkeypatch.setattr(bias_source, "judge_bias_section_of_facts",
                        lambda *a, **k: fitted.append(1) or real(*a, **k))
    again = cached_section(tmp_path, facts, families=FAMILIES, agreement=agreement, replicates=40)
    assert not fitted and json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True)
    cached_section(tmp_path, facts, families=None, agreement=agreement, replicates=40)  # a new key: fitted
    assert fitted == [1]
