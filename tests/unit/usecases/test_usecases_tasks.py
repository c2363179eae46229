"""The use-case layer's tournament, plan, report, compare, rejudge, import and export doors
(ebtui.core.usecases): real scripted models from a models.toml, real stores in tmp, no front end."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import RoundStatus
from ebtui.core.store import ResultsStore
from ebtui.core.usecases import compare as compare_uc
from ebtui.core.usecases import export as export_uc
from ebtui.core.usecases import importing, plan, rejudge, report
from ebtui.core.usecases import tournament as tuc
from ebtui.core.usecases.context import AppContext, open_context
from ebtui.errors import UsageError
from tests.support.factories import make_round


@pytest.fixture(autouse=True)
def _fast_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")


def _models(path: Path, names: list[str]) -> Path:
    lines: list[str] = []
    for n in names:
        lines += [f"[models.{n}]", 'provider = "scripted"', "latency_s = 0.0", "price_in = 1.0", "price_out = 4.0"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _tournament(path: Path, models: list[str], **extra: object) -> Path:
    ids = [d.id for d in load_dilemmas()[:2]]
    fields = {"name": "uc", "models": models, "dilemmas": ids, "judges": "rotate", **extra}
    path.write_text("\n".join(f"{k} = {json.dumps(v)}" for k, v in fields.items()) + "\n")
    return path


def _context(tmp_path: Path) -> AppContext:
    return open_context(store=tmp_path / "store", models_file=_models(tmp_path / "models.toml",
                                                                      ["alpha", "beta", "gamma"]))


def _played(tmp_path: Path) -> tuple[AppContext, str]:
    """A three-model tournament played to the end through the use case, as both front ends run it."""
    ctx = _context(tmp_path)
    cfg, root = tuc.read_config(str(_tournament(tmp_path / "t.toml", ["alpha", "beta", "gamma"])), None,
                                str(tmp_path / "store"))
    assert root == tmp_path / "store"
    tplan = tuc.prepare(ctx, cfg)
    run = tuc.start(ctx, tplan, tuc.clients_for(ctx, tplan), progress_interval_s=0.05)

    async def drain() -> list[tuc.RunEvent]:
        try:
            return [ev async for ev in run.events()]
        finally:
            await run.aclose()

    events = asyncio.run(drain())
    assert isinstance(events[0], tuc.TournamentStarted) and isinstance(events[-1], tuc.TournamentFinished)
    done = [ev for ev in events if isinstance(ev, tuc.RoundCompleted)]
    assert len(done) == tplan.estimate().rounds == 12  # 6 pairings x 2 dilemmas, one judge each
    assert all(ev.round.status == RoundStatus.COMPLETE for ev in done)
    return ctx, tplan.tournament_id


def test_tournament_config_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--resume ID"):
        tuc.read_config(None, None, None)
    with pytest.raises(UsageError, match="give --store DIR"):
        tuc.read_config(None, "t-nothing", str(tmp_path / "none"))
    ctx = _context(tmp_path)
    cfg = tuc.config_file(_tournament(tmp_path / "t.toml", ["alpha", "zeta"]))
    with pytest.raises(UsageError, match="no model named 'zeta'"):
        tuc.prepare(ctx, cfg, check_writable=False)


def test_dry_run_counts_the_calls_and_the_disk_and_batch_prices(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    tplan = tuc.prepare(ctx, tuc.config_file(_tournament(tmp_path / "t.toml", ["alpha", "beta", "gamma"])),
                        check_writable=False)
    dry = tuc.dry_run(tplan, batch=True)
    assert dry.estimate.rounds == 12 and dry.estimate.total_calls == 12 * 5
    assert dry.disk_bytes > 0 and dry.batch is not None and "batch_price_usd" in dry.batch
    assert tuc.dry_run(tplan).batch is None


def test_a_run_is_listed_resumable_and_reported(tmp_path: Path) -> None:
    ctx, tid = _played(tmp_path)
    saved = tuc.list_saved(ctx, problems=True)
    assert [(row.tournament.id, row.done, row.status) for row in saved.rows] == [(tid, 12, "complete")]
    assert len(tuc.completed_keys(ctx, tid)) == 12
    # the saved tournament's config reads back the same schedule
    again, _ = tuc.read_config(None, tid, str(ctx.store_root))
    assert tuc.plan(ctx, again, resume_id=tid).tournament_id == tid
    # the report over its columns: families resolved once, the numbers, the JSON and the files
    sel = report.select(ctx, tournament_id=tid)
    sel.require_rounds()
    fams = report.families(ctx, sel.facts)
    assert set(fams) >= {"alpha", "beta", "gamma"}
    data = report.build_report(sel, fams)
    got = report.report_json(sel, data)
    assert got["filters"] == {"tournament": tid, "model": None, "dilemma": None} and got["n_rounds"] == 12
    assert report.default_title(sel) == "ebtui report: uc"
    md = report.write_markdown(sel, data, tmp_path / "out", "T")
    assert md.name == "report.md" and "T" in md.read_text(encoding="utf-8")
    with pytest.raises(UsageError, match="model 'nobody'; nothing to report"):
        report.select(ctx, tournament_id=tid, model="nobody").require_rounds()
    # the app's Analysis tab: cached until the data change
    cache = report.AnalysisCache()
    first = cache.compute(ctx, tid, ctx.models, views=("effective",))
    assert first.rounds == 12 and first.fit.tables["models"].rows
    assert cache.compute(ctx, tid, ctx.models, views=("effective",)) is first


def test_compare_rejudge_and_export_over_a_played_tournament(tmp_path: Path) -> None:
    ctx, tid = _played(tmp_path)
    got = compare_uc.compare(ctx, "alpha", "beta", tournament_id=tid)
    assert got["a"] == "alpha" and got["b"] == "beta" and got["n_dilemmas"] == 2
    with pytest.raises(UsageError, match="two different models"):
        compare_uc.compare(ctx, "alpha", "alpha")
    assert compare_uc.comparison_json(got, tid)["filters"] == {"tournament": tid}  # type: ignore[index]

    prep = rejudge.prepare(ctx, rejudge.RejudgeRequest([tid], judges=["gamma"]))
    assert prep.plan.calls and not prep.nothing_to_ask and prep.needed == ["gamma"]
    assert prep.run_id == rejudge.prepare(ctx, rejudge.RejudgeRequest([tid], judges=["gamma"])).run_id
    out = asyncio.run(rejudge.run(ctx, prep, rejudge.judge_clients(ctx, prep)))
    assert len(out.result.added) == len(prep.plan.calls) and not out.incomplete
    assert rejudge.prepare(ctx, rejudge.RejudgeRequest([tid], judges=["gamma"])).nothing_to_ask  # resumable
    with pytest.raises(UsageError, match="not in models.toml"):
        rejudge.prepare(ctx, rejudge.RejudgeRequest([tid], judges=["omega"]))

    sel = export_uc.select(ctx, tid)
    paths = export_uc.write_tables(ctx, sel, tmp_path / "tables", formats=("csv",))
    assert {p.name for p in paths} >= {"scores.csv", "rounds.csv", "phases.csv", "README.md"}
    with pytest.raises(UsageError, match="nothing to export"):
        export_uc.select(ctx, "t-none")


def test_precision_plan_from_a_saved_tournament_and_its_config(tmp_path: Path) -> None:
    ctx, tid = _played(tmp_path)
    cfg = plan.plan_config(ctx, None, [tid], None)
    assert cfg is not None and cfg.models == ["alpha", "beta", "gamma"]
    got = plan.precision_plan(ctx, cfg, from_ids=[tid], config_given=False, delta=1.0, half_width=None,
                              n_models=None, document=None, document_dilemmas=lambda _p: 0)
    assert got.components.source == "estimated" and got.result.models == ["alpha", "beta", "gamma"]
    assert got.result.designs and got.result.answer is not None
    with pytest.raises(UsageError, match="no rounds of that tournament"):
        plan.precision_plan(ctx, None, from_ids=["t-none"], config_given=False, delta=None, half_width=None,
                            n_models=3, document=None, document_dilemmas=lambda _p: 5)


def test_the_set_up_prediction_follows_the_store(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    names = tuc.model_names(ctx)
    assert names == sorted(names) and {"alpha", "beta", "gamma"} <= set(names)
    ids = [d.id for d in load_dilemmas()[:3]]
    data = {"name": "set-up", "models": ["alpha", "beta", "gamma"], "dilemmas": ids, "judges": "rotate",
            "rounds_per_pairing": 1}
    p = tuc.predict(ctx, data, tuc.store_components(ctx))
    assert (p["dilemmas"], p["pairings"], p["rounds"], p["calls"]) == (3, 6, 18, 90)
    assert p["components"] == "defaults (no saved rounds)" and p["half_width"] is not None
    assert tuc.planned(ctx, p["config"], "the set-up").estimate.rounds == 18


def test_import_refuses_two_groupings_and_a_store_that_is_a_file(tmp_path: Path) -> None:
    ctx = open_context(store=tmp_path / "store")
    with pytest.raises(UsageError, match="not both"):
        importing.import_eb(ctx, ["x"], tournament="t", per_run=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a folder"):
        importing.import_eb(open_context(store=tmp_path / "file"), ["x"])


def test_report_of_whole_rounds_counts_every_round(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "s", durable=False)
    for i in range(6):
        store.save_round(make_round(i, dilemma=f"d{i % 3}", tournament="t-x"))
    ctx = open_context(store_obj=store, models_file=_models(tmp_path / "m.toml", ["alpha", "beta", "gamma"]))
    rounds = report.select_rounds(ctx, tournament="t-x", model="alpha")
    assert len(rounds) == 6
    data, fams = report.rounds_report(ctx, rounds, replicates=50)
    assert data.rounds == 6 and set(fams) == {"alpha", "beta", "gamma"}
    bad = open_context(store_obj=store, models_file=tmp_path / "missing.toml")
    with pytest.raises(ValueError, match="missing.toml"):
        report.rounds_report(bad, rounds)


def test_the_resume_line_carries_every_option_given() -> None:
    line = tuc.resume_command("ebtui tournament t.toml --resume t-1", [("--store", "s"), ("--batch", True),
                                                                       ("--concurrency", None)], "my doc.docx")
    assert line == "ebtui --document 'my doc.docx' tournament t.toml --resume t-1 --store s --batch"
    assert tuc.resume_command("ebtui tournament t.toml --resume t-1", []) == "ebtui tournament t.toml --resume t-1"
