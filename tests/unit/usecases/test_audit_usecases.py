"""The human audit's use cases (ebtui.core.usecases.audit): ratings kept in the audit's own file, skip and
resume, which audits a report may use (the draw must cover the report's judgments), the blind item, and the
section in the Markdown and HTML reports and the app's Analysis tab."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebtui.core.records import CRITERIA
from ebtui.core.usecases import audit as uc
from ebtui.core.usecases.context import open_context
from ebtui.core.usecases.report import AnalysisCache
from ebtui.errors import UsageError
from tests.support.audit_sim import AuditWorld, World, generate
from tests.support.factories import open_store


def _ctx(tmp_path: Path, world: World, tournament: str = "t-audit"):  # type: ignore[no-untyped-def]
    store = open_store(tmp_path / "s")
    for r in world.rounds:
        store.save_round(r.model_copy(update={"tournament_id": tournament}))
    return open_context(store_obj=store)


def _score_all(ctx, audit: uc.Audit, world: World, rater: str = "ann") -> None:  # type: ignore[no-untyped-def]
    for j in audit.judgments:
        uc.rate(ctx, audit.id, {(j.round_id, j.judgment_id, t, c): world.hidden[(j.round_id, j.judgment_id, t, c)]
                                for t in ("a", "b") for c in CRITERIA}, rater=rater)


def test_ratings_skip_and_resume(tmp_path: Path) -> None:
    world = generate(AuditWorld(dilemmas=3, repeats=1), seed=0)
    ctx = _ctx(tmp_path, world)
    a = uc.draw_audit(ctx, 4, seed=2)
    j0, j1 = a.judgments[0], a.judgments[1]
    assert uc.resume_index(a) == 0 and uc.current_audit(ctx) is not None
    a = uc.rate(ctx, a.id, {(j0.round_id, j0.judgment_id, t, c): 6 for t in ("a", "b") for c in CRITERIA}, rater="ann")
    assert a.done() == 1 and uc.resume_index(a) == 1
    uc.skip(ctx, a.id, j1.ref)
    a = uc.load_audit(ctx, a.id)
    assert a.skipped == [j1.ref] and uc.resume_index(a) == 2
    a = uc.rate(ctx, a.id, {(j0.round_id, j0.judgment_id, "a", "consistency"): 6}, rater="bob")
    assert len(a.ratings) == 14  # the same score again is not stored twice
    with pytest.raises(UsageError, match="outside 1-10"):
        uc.rate(ctx, a.id, {(j0.round_id, j0.judgment_id, "a", "consistency"): 11}, rater="ann")
    with pytest.raises(UsageError, match="not one of audit"):
        uc.rate(ctx, a.id, {("r-nope", "primary", "a", "consistency"): 5}, rater="ann")
    assert len(uc.load_audit(ctx, a.id).ratings) == 14
    summary = uc.list_audits(ctx)[0]
    assert (summary.judgments, summary.done, summary.scores, summary.raters) == (4, 1, 14, ("ann",))
    # the rounds are untouched: no override, the judge's scores as they were
    r = ctx.store.load_round(j0.round_id)
    assert r.judgment is not None and not r.judgment.overrides
    assert r.judgment == next(x for x in world.rounds if x.id == j0.round_id).judgment


def test_the_blind_item_holds_nothing_of_the_judge(tmp_path: Path) -> None:
    world = generate(AuditWorld(dilemmas=3, repeats=1), seed=0)
    ctx = _ctx(tmp_path, world)
    a = uc.draw_audit(ctx, 2, seed=1)
    item = uc.blind_item(ctx, a, 0)
    r = ctx.store.load_round(a.judgments[0].round_id)
    assert item.total == 2 and [p[0] for p in item.phases] == ["Presentation", "Response", "Rebuttal",
                                                                "Consistency test"]
    # (the round id is not shown; this simulation's texts are "<phase> by <model>", so the teams' words name them)
    shown = repr((item.dilemma_title, item.dilemma_text, item.phases, item.given))
    assert r.judge_model not in shown and "judgment by" not in shown
    assert all(team in ("Team A", "Team B") for _, team, _ in item.phases)
    assert item.given == {}


def test_an_audit_is_used_only_for_rounds_its_draw_covers(tmp_path: Path) -> None:
    world = generate(AuditWorld(dilemmas=4, repeats=1), seed=3)
    ctx = _ctx(tmp_path, world)
    other = generate(AuditWorld(dilemmas=3, repeats=1), seed=4)
    for r in other.rounds:
        ctx.store.save_round(r.model_copy(update={"id": r.id + "-o", "tournament_id": "t-other"}))
    a = uc.draw_audit(ctx, 20, tournament="t-audit", seed=5)
    _score_all(ctx, a, world)
    mine = ctx.store.load_rounds(tournament="t-audit")
    use, notes = uc.usable_audits([uc.load_audit(ctx, a.id)], mine)
    assert [x.id for x in use] == [a.id] and not notes
    use, notes = uc.usable_audits([uc.load_audit(ctx, a.id)], ctx.store.load_rounds())
    assert use == [] and "were not in its draw" in notes[0]
    # the Analysis tab of the audited tournament has the section; the other tournament's says why not
    tab = AnalysisCache().compute(ctx, "t-audit", None, views=("effective", "as_judged"))
    titles = [t.title for t in tab.tables["effective"] if t.key.startswith("human_audit")]
    assert titles and titles[0].startswith("Calibrated to 20 human-scored judgments")
    models = next(t for t in tab.tables["as_judged"] if t.key == "human_audit_models").as_dicts()
    assert {m["model"] for m in models} == {"m1", "m2", "m3", "m4"}
    other_tab = AnalysisCache().compute(ctx, "t-other", None, views=("effective",))
    blank = next(t for t in other_tab.tables["effective"] if t.key == "human_audit")
    assert "no audit drawn over these rounds" in str(blank.rows[0][0])


def test_markdown_and_html_sections(tmp_path: Path) -> None:
    from ebtui.core.usecases import report as rep

    world = generate(AuditWorld(dilemmas=4, repeats=1), seed=6)
    ctx = _ctx(tmp_path, world)
    a = uc.draw_audit(ctx, 24, seed=1)
    _score_all(ctx, a, world)
    sel = rep.select(ctx, whole_rounds=True)
    fams = rep.families(ctx, sel.facts)
    cal = uc.calibration(ctx, sel, fams, replicates=100)
    data = rep.build_report(sel, fams, replicates=50)
    md = rep.write_markdown(sel, data, tmp_path / "out", "t")
    uc.add_to_markdown(md, cal)
    text = md.read_text(encoding="utf-8")
    assert "## Calibrated to 24 human-scored judgments" in text and "| m3 |" in text
    page = rep.write_html(sel, data, tmp_path / "out-html", "t")
    uc.add_to_html(page, cal)
    html = page.read_text(encoding="utf-8")
    assert html.index('id="human-audit"') < html.index("</main>") and "Calibrated to 24" in html
