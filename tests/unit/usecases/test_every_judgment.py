"""One analysis, every judgment, every size: on a store re-judged after its analysis columns were built (the
re-judgments saved the way `ebtui rejudge` saves them: `store.modify_round`), `ebtui report --json`, the Python
API, `ebtui compare` and the app's Analysis tab read the same rows — every judgment — and give the same model
means, equal to a plain least-squares fit of the documented model (docs/STATISTICS.md, "The model") written
here with numpy.linalg.lstsq. The slow variant is above the old 2,000-round limit; the fast one runs the same
checks on a small store (no path depends on the size any more)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from ebtui.api import open_store
from ebtui.cli import cli
from ebtui.core.families import model_family
from ebtui.core.records import CRITERIA, Judgment, Round, Team
from ebtui.core.store import ResultsStore
from ebtui.core.usecases import compare as compare_uc
from ebtui.core.usecases import report as uc
from ebtui.core.usecases.context import open_context
from tests.support.factories import open_store as open_results
from tests.support.factories import planted_scores
from tests.support.sim_truth import default_truth, generate

NEW_JUDGE = "mistral-new"  # a judge of its own family
NEW_SEVERITY = 0.8


def _rejudged_store(root: Path, *, dilemmas: int, repeats: int) -> tuple[ResultsStore, list[Round]]:
    truth = default_truth()
    rounds = generate(truth, dilemmas=dilemmas, repeats=repeats, seed=5, rotate=True)
    store = open_results(root)
    for r in rounds:
        store.save_round(r)
    store.flush()
    # a first report builds the analysis columns: one row per round (no re-judgment yet)
    sel = uc.select(open_context(store_obj=store))
    assert len(sel.facts) == len(rounds)
    rng = np.random.default_rng(9)
    for k, r in enumerate(rounds):
        def add(rd: Round, k: int = k) -> bool:
            base = {"a": truth.skill[rd.team_a_model] + truth.seat_gap / 2,
                    "b": truth.skill[rd.team_b_model] - truth.seat_gap / 2}
            made = {t: planted_scores(v + NEW_SEVERITY + rng.normal(0, 1.0, len(CRITERIA))) for t, v in base.items()}
            rd.extra_judgments.append(Judgment(team_a_scores=made["a"], team_b_scores=made["b"],
                                               judge_model=NEW_JUDGE, key=f"{NEW_JUDGE}-ab-1", origin="rejudge"))
            if k % 3 == 0:  # the round's own judge again, Team B read first
                again = {t: planted_scores(v + truth.severity[rd.judge_model] + rng.normal(0, 1.0, len(CRITERIA)))
                         for t, v in base.items()}
                rd.extra_judgments.append(Judgment(team_a_scores=again["a"], team_b_scores=again["b"],
                                                   judge_model=rd.judge_model, key=f"{rd.judge_model}-ba-1",
                                                   order="ba", origin="rejudge"))
            return True

        store.modify_round(r.id, add)
    store.flush()
    return store, store.load_rounds()


def _sum_code(idx: np.ndarray, k: int) -> np.ndarray:
    """Deviation coding: k-1 columns, the last level -1 everywhere."""
    out = np.zeros((len(idx), max(k - 1, 0)))
    for level in range(k - 1):
        out[idx == level, level] = 1.0
    out[idx == k - 1, :] = -1.0
    return out


def lstsq_means(rounds: list[Round]) -> dict[str, float]:
    """The documented model over every judgment of every round, by numpy.linalg.lstsq: score = mu +
    skill[model] + seat + severity[judge] + pi * same_family + difficulty[dilemma] + level[criterion] + e,
    every factor sum-coded; a model's adjusted mean is mu + skill[model]."""
    rows: list[tuple[float, str, float, str, float, str, str]] = []
    for r in rounds:
        for j in r.all_judgments():
            judge = j.judge_model or r.judge_model
            seats: tuple[tuple[Team, str], ...] = (("a", r.team_a_model), ("b", r.team_b_model))
            for team, model in seats:
                for c, v in j.parsed_scores(team).as_dict().items():
                    if v is not None:
                        rows.append((float(v), model, 1.0 if team == "a" else -1.0, judge,
                                     float(model_family(model) == model_family(judge)), r.dilemma_id, c))
    y = np.array([row[0] for row in rows])

    def codes(col: int) -> tuple[list[str], np.ndarray]:
        names = sorted({str(row[col]) for row in rows})
        return names, np.array([names.index(str(row[col])) for row in rows])

    models, mi = codes(1)
    judges, ji = codes(3)
    dilemmas, di = codes(5)
    crits, ci = codes(6)
    seat = np.array([row[2] for row in rows])[:, None]
    fam = np.array([row[4] for row in rows])[:, None]
    X = np.hstack([np.ones((len(y), 1)), _sum_code(mi, len(models)), seat, _sum_code(ji, len(judges)), fam,
                   _sum_code(di, len(dilemmas)), _sum_code(ci, len(crits))])
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    skill = np.append(beta[1:len(models)], -beta[1:len(models)].sum())
    return {m: float(beta[0] + s) for m, s in zip(models, skill, strict=True)}


def _check(store: ResultsStore, rounds: list[Round]) -> None:
    n_judgments = sum(len(r.all_judgments()) for r in rounds)
    root = str(store.root)
    # ebtui report --json, a fresh process's view of the store (its columns were built before the re-judgments)
    got = CliRunner().invoke(cli, ["report", "--json", "--store", root])
    assert got.exit_code == 0, got.output
    data: dict[str, Any] = json.loads(got.stdout)
    means = {row["model"]: row["mean"] for row in data["models"]}
    truth = lstsq_means(rounds)
    assert means.keys() == truth.keys()
    for m, v in truth.items():
        assert abs(means[m] - v) < 1e-6, (m, means[m], v)
    assert data["n_rounds"] == len(rounds)
    # every section is there, the judge-bias section over every judgment; nothing left out
    assert "omitted" not in data
    for key in ("style", "order", "agreement_bias", "reliability", "judgments", "judge_bias_fit"):
        assert key in data, key
    assert data["judgments"]["judgments"] == n_judgments
    assert data["judgments"]["rejudged"] == n_judgments - len(rounds)
    assert data["judge_bias_fit"]["judgments"] == n_judgments
    assert NEW_JUDGE in [o["judge"] for o in data["order"]]
    # the Python API: the same numbers
    api = open_store(root).report()
    assert {m.model: m.mean for m in api.models} == means
    # ebtui compare: the same rows (a pair's difference equals the difference of the means here: every
    # dilemma is common to both)
    ctx = open_context(store_obj=ResultsStore(root))
    a, b = sorted(means)[:2]
    diff = compare_uc.compare(ctx, a, b)["diff"]
    assert abs(diff - (means[a] - means[b])) < 1e-6
    # the app's Analysis tab (one tournament: all the rounds here)
    tab = uc.AnalysisCache().compute(ctx, rounds[0].tournament_id or "", None, views=("as_judged",))
    assert {str(r["model"]): r["mean"] for r in tab.fit.rows("models")} == pytest.approx(means, abs=1e-9)
    assert tab.rounds == len(rounds) and tab.judgments == n_judgments
    assert "style_coefficients" in [t.key for t in tab.tables["as_judged"]]


def test_every_front_end_counts_every_judgment(tmp_path: Path) -> None:
    store, rounds = _rejudged_store(tmp_path / "store", dilemmas=6, repeats=2)
    assert any(r.extra_judgments for r in rounds) and len(rounds) < 2000
    _check(store, rounds)


@pytest.mark.slow
def test_every_front_end_counts_every_judgment_above_2000_rounds(tmp_path: Path) -> None:
    store, rounds = _rejudged_store(tmp_path / "store", dilemmas=12, repeats=11)
    assert len(rounds) > 2000
    _check(store, rounds)


def test_the_columns_follow_rejudge_saves_through_the_save_hook(tmp_path: Path) -> None:
    from ebtui.core.analysis.source import facts_source

    store, rounds = _rejudged_store(tmp_path / "store", dilemmas=3, repeats=1)
    src = facts_source(store)
    facts = src.facts()
    assert src.last_sync["from_hook"] == len(rounds) and src.last_sync["from_files"] == 0
    assert len(facts) == sum(len(r.all_judgments()) for r in rounds)
    assert facts.id.tolist() == [rid for r in rounds for rid in
                                 [r.id] + [f"{r.id}#{j.key}" for j in r.extra_judgments]]
    assert set(facts.origin[facts.key != ""].tolist()) == {"rejudge"}
    assert (facts.order == "ba").sum() == sum(1 for r in rounds for j in r.all_judgments() if j.order == "ba")


def test_a_cap_is_named_in_the_tab_and_the_report_names_a_missing_section(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from ebtui.core.analysis.frame import Facts
    from ebtui.core.report import build_report_data

    store, rounds = _rejudged_store(tmp_path / "store", dilemmas=3, repeats=1)
    ctx = open_context(store_obj=store)
    monkeypatch.setattr(uc, "TRANSCRIPTS_UP_TO", len(rounds) - 1)
    got = uc.AnalysisCache().compute(ctx, rounds[0].tournament_id or "", None, views=("as_judged",))
    assert [o["section"] for o in got.omitted] == ["compare view transcripts"]
    assert f"{len(rounds):,} rounds" in got.omitted[0]["reason"]
    assert uc.tab_rounds(ctx, rounds[0].tournament_id or "", got) == []
    # nothing selected: the judge-bias section is not computed, and the JSON says so
    empty = build_report_data(Facts.from_rounds([])).json()
    assert empty["omitted"] == [{"section": "judge_bias", "reason": "no rounds selected"}]


def test_above_its_cap_the_judge_bias_section_is_a_named_sample_of_whole_rounds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge-bias fit's design is dense (gigabytes at 100,000 rounds): above BIAS_JUDGMENTS_UP_TO judgments
    it is fitted on a seeded sample of whole rounds, and `report --json`, the Python API and the tab name the
    sample in `omitted`; the model means still come from every judgment."""
    from ebtui.core.analysis import bias_source
    from ebtui.core.analysis.source import facts_source

    store, rounds = _rejudged_store(tmp_path / "s", dilemmas=4, repeats=1)
    n_judgments = sum(len(r.all_judgments()) for r in rounds)
    facts = facts_source(store).facts()
    cap = n_judgments // 3
    rows, note = bias_source.bias_sample(facts, up_to=cap)
    assert note is not None and f"of {n_judgments:,} judgments" in note
    assert 0 < int(rows.judged.sum()) <= cap
    drawn = set(rows.round.tolist())
    for r in rounds:  # whole rounds: every judgment of a drawn round, none of another
        assert int(((rows.round == r.id) & rows.judged).sum()) == (len(r.all_judgments()) if r.id in drawn else 0)
    again, _ = bias_source.bias_sample(facts, up_to=cap)
    assert again.id.tolist() == rows.id.tolist()  # seeded: the same sample every time
    assert bias_source.bias_sample(facts, up_to=n_judgments) == (facts, None)

    monkeypatch.setattr(bias_source, "BIAS_JUDGMENTS_UP_TO", cap)
    got = CliRunner().invoke(cli, ["report", "--json", "--store", str(store.root)])
    assert got.exit_code == 0, got.output
    data: dict[str, Any] = json.loads(got.stdout)
    named = [o for o in data["omitted"] if o["section"] == "judge bias and reliability"]
    assert len(named) == 1 and "seeded random sample of whole rounds" in named[0]["reason"]
    assert data["judge_bias_fit"]["judgments"] == int(rows.judged.sum())
    truth = lstsq_means(rounds)  # the model means: every judgment still
    assert all(abs(row["mean"] - truth[row["model"]]) < 1e-6 for row in data["models"])
    ctx = open_context(store_obj=ResultsStore(str(store.root)))
    tab = uc.AnalysisCache().compute(ctx, rounds[0].tournament_id or "", None, views=("as_judged",))
    assert [o for o in tab.omitted if o["section"] == "judge bias and reliability"] == named
