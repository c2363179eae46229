"""The Analysis tab's cache (ebtui.core.usecases.report.AnalysisCache): results reused until the data
change, recomputed after an override, and a cancelled computation stops between steps."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebtui.core.analysis.common import Table
from ebtui.core.usecases.context import open_context
from ebtui.core.usecases.report import AnalysisCache, AnalysisCancelled
from tests.support.factories import open_store
from tests.support.sim_truth import default_truth, generate

VIEWS = ("effective", "as_judged")


def test_results_are_cached_until_the_data_change_and_cancel_stops(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s")
    rounds = generate(default_truth(), dilemmas=3, seed=2)[:30]
    for r in rounds:
        store.save_round(r)
    ctx = open_context(store_obj=store)
    cache = AnalysisCache()
    steps: list[str] = []
    first = cache.compute(ctx, "t-truth", None, views=VIEWS, progress=steps.append)
    assert first[0] == 30 and {t.key for t in first[1]["effective"]} >= {"model_comparison", "cross_model"}
    assert first[2].tables["models"].rows and steps[-1] == "done"
    assert cache.compute(ctx, "t-truth", None, views=VIEWS) is first  # nothing changed: the same result
    store.apply_override(rounds[0].id, "a", "consistency", 1)
    second = cache.compute(ctx, "t-truth", None, views=VIEWS)
    assert second is not first
    row = next(r for r in second[1]["effective"][0].as_dicts()
               if r["model"] == rounds[0].team_a_model and r["role"] == "presenting" and r["criterion"] == "consistency")
    old = next(r for r in first[1]["effective"][0].as_dicts()
               if r["model"] == rounds[0].team_a_model and r["role"] == "presenting" and r["criterion"] == "consistency")
    assert row["mean"] != old["mean"]
    # a first analysis reports its reading of the round files (every 500 rounds) and stops at the next
    # check once cancelled
    (Path(store.root) / "columns" / "facts.parquet").unlink()
    seen: list[str] = []

    def cancel_when_reading() -> bool:
        return any("building the analysis columns" in s for s in seen)

    with pytest.raises(AnalysisCancelled):
        AnalysisCache().compute(ctx, "t-truth", None, views=VIEWS, cancelled=cancel_when_reading,
                                progress=seen.append)
    assert seen[-1] == "building the analysis columns: 0 / 30 rounds"
    calls: list[str] = []
    with pytest.raises(AnalysisCancelled):
        AnalysisCache().compute(ctx, "t-truth", None, views=VIEWS, cancelled=lambda: bool(calls.append("?")) or
                                len(calls) > 2)


def test_the_tabs_judge_bias_tables_use_the_families_the_report_uses(tmp_path: Path) -> None:
    """Both front ends show the same numbers: with a models.toml that puts the Claude models in one family
    and the others in another, the Analysis tab's same-family style models equal `ebtui report`'s (whose
    families come from the same file), and differ from a reading by names alone."""
    from ebtui.config import parse_models
    from ebtui.core.analysis.bias_report import bias_tables
    from ebtui.core.usecases.report import build_report, families_for, select

    store = open_store(tmp_path / "s")
    rounds = generate(default_truth(), dilemmas=3, seed=2)[:30]
    for r in rounds:
        store.save_round(r)
    names = sorted({m for r in rounds for m in (r.team_a_model, r.team_b_model, r.judge_model)})
    family = {n: ("house" if n.startswith("claude") else "rival") for n in names}
    models = parse_models({"models": {n: {"provider": "scripted", "family": family[n]} for n in names}}, None)
    ctx = open_context(store_obj=store, models=models)

    tab = AnalysisCache().compute(ctx, "t-truth", models, views=VIEWS)
    sel = select(ctx, tournament_id="t-truth")
    fams = families_for(sel.facts, models)
    assert {n: fams[n] for n in names} == family
    report = build_report(sel, fams)
    assert report.judge_bias is not None

    def style_models(tables: list[Table]) -> list[dict[str, object]]:
        return next(t for t in tables if t.key == "style_models").as_dicts()

    assert style_models(tab.tables["effective"]) == style_models(bias_tables(report.judge_bias))
    by_name = AnalysisCache().compute(open_context(store_obj=store), "t-truth", None, views=VIEWS)
    assert style_models(by_name.tables["effective"]) != style_models(tab.tables["effective"])
