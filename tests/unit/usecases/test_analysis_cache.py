"""The Analysis tab's cache (ebtui.core.usecases.report.AnalysisCache): results reused until the data
change, recomputed after an override, and a cancelled computation stops between steps."""

from __future__ import annotations

from pathlib import Path

import pytest

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
        return any("rounds checked" in s for s in seen)

    with pytest.raises(AnalysisCancelled):
        AnalysisCache().compute(ctx, "t-truth", None, views=VIEWS, cancelled=cancel_when_reading,
                                progress=seen.append)
    assert seen[-1] == "reading the analysis columns (0 of 30 rounds checked)"
    calls: list[str] = []
    with pytest.raises(AnalysisCancelled):
        AnalysisCache().compute(ctx, "t-truth", None, views=VIEWS, cancelled=lambda: bool(calls.append("?")) or
                                len(calls) > 2)
