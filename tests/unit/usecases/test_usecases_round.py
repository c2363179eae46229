"""The use-case layer's round, review and browse tasks (ebtui.core.usecases: play, review, rounds, dilemmas,
models) on real stores in tmp, the scripted models and the built-in models.toml."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pytest

from ebtui.core.events import PhaseStarted, RoundEvent, RoundFinished
from ebtui.core.records import CRITERIA, Judgment, PhaseStatus, RoundStatus, Scores
from ebtui.core.store import ResultsStore
from ebtui.core.usecases import dilemmas, models, play, review, rounds
from ebtui.core.usecases.context import AppContext, open_context
from ebtui.errors import UsageError
from ebtui.providers.base import ModelClient
from ebtui.providers.scripted import ScriptedClient
from tests.support.factories import make_dilemmas, make_round


def _scripted(names: Iterable[str]) -> dict[str, ModelClient]:
    return {n: ScriptedClient(n) for n in names}


@pytest.fixture
def ctx(tmp_path: Path) -> AppContext:
    return open_context(store_obj=ResultsStore(tmp_path / "store", durable=False), make_clients=_scripted)


def _request(**changes: object) -> play.RoundRequest:
    """Dilemma D1 (looked up by id), alpha vs beta, judged by judge; `changes` as dataclasses.replace takes."""
    return replace(play.RoundRequest("D1", "alpha", "beta", "judge", dilemmas=make_dilemmas()), **changes)


# -- prepare_round: every check before any model call -------------------------------------------------------
def test_prepare_round_looks_the_dilemma_up_and_picks_a_round_id(ctx: AppContext) -> None:
    prepared = play.prepare_round(ctx, _request(dilemma="d2", max_tokens=50, judge_order="ba", blind_judge=True))
    assert prepared.dilemma.id == "D2"  # ids match ignoring case when no exact one does
    assert prepared.round_id.startswith("r-") and prepared.spec.round_id == prepared.round_id
    assert set(prepared.clients) == {"alpha", "beta", "judge"} and prepared.resume is None
    assert (prepared.spec.max_tokens, prepared.spec.judge_order, prepared.spec.blind_judge) == (50, "ba", True)


def test_an_unknown_dilemma_is_one_line_naming_the_document_and_the_ids(ctx: AppContext) -> None:
    with pytest.raises(UsageError, match=r"unknown dilemma 'nope' in my\.docx \(known: D1, D2\)"):
        play.prepare_round(ctx, _request(dilemma="nope", document_name="my.docx"))
    with pytest.raises(UsageError, match="in the built-in document"):
        play.prepare_round(ctx, _request(dilemma="nope"))


def test_an_unknown_model_is_a_usage_error_from_the_models_config(tmp_path: Path) -> None:
    context = open_context(store=tmp_path / "store")  # the built-in models: local and scripted
    with pytest.raises(UsageError, match="no-such-model"):
        play.prepare_round(context, _request(team_a="scripted", team_b="no-such-model", judge="scripted"))
    assert not (tmp_path / "store").exists()  # nothing was written before the models were checked


def test_a_store_that_cannot_be_written_is_refused_before_any_call(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    made: list[str] = []

    def clients(names: Iterable[str]) -> dict[str, ModelClient]:
        made.extend(names)
        return _scripted(names)

    context = open_context(store=blocker / "store", make_clients=clients)
    with pytest.raises(UsageError, match="cannot be created: .*a-file is not a directory"):
        play.prepare_round(context, _request())
    assert made == ["alpha", "beta", "judge"]  # the clients were built (keys checked), none was called


def test_resume_continues_the_saved_round_and_refuses_another_pairing(ctx: AppContext) -> None:
    saved = make_round(0, round_id="r-saved", dilemma="D1", team_a="alpha", team_b="beta", judge="judge",
                       status=RoundStatus.INCOMPLETE)
    ctx.store.save_round(saved)
    prepared = play.prepare_round(ctx, _request(resume_id="r-saved"))
    assert prepared.round_id == "r-saved" and prepared.resume is not None and prepared.resume.id == "r-saved"
    with pytest.raises(UsageError, match="round r-saved is D1: Team A alpha vs Team B beta; resume it with"):
        play.prepare_round(ctx, _request(resume_id="r-saved", team_a="beta", team_b="alpha"))
    with pytest.raises(UsageError, match="results store"):
        play.prepare_round(ctx, _request(resume_id="r-missing"))


def test_the_write_probe_can_be_left_to_the_caller(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    unwritable = open_context(store=tmp_path / "f" / "s", make_clients=_scripted)
    with pytest.raises(UsageError, match="cannot be created"):
        play.check_writable(unwritable)
    # the app probes once at start and then prepares its rounds without the probe
    assert play.prepare_round(unwritable, _request(), check_store=False).round_id.startswith("r-")


# -- play: events, the saved round ----------------------------------------------------------------------------
def test_play_yields_the_rounds_events_and_saves_it(ctx: AppContext) -> None:
    prepared = play.prepare_round(ctx, _request())

    async def collect() -> list[RoundEvent]:
        return [event async for event in play.play(ctx, prepared)]

    seen = asyncio.run(collect())
    assert isinstance(seen[0], PhaseStarted) and isinstance(seen[-1], RoundFinished)
    assert seen[-1].round.id == prepared.round_id
    ctx.store.flush()
    saved = ctx.store.load_round(prepared.round_id)
    assert saved.status == RoundStatus.COMPLETE and saved.judgment is not None
    assert all(p.status == PhaseStatus.COMPLETE for p in saved.phases)


def test_play_to_end_hands_each_event_over_and_closes_the_clients(ctx: AppContext) -> None:
    closed: list[str] = []

    class Closing(ScriptedClient):
        async def aclose(self) -> None:
            closed.append(self.name)

    context = open_context(store_obj=ctx.store, make_clients=lambda names: {n: Closing(n) for n in names})
    prepared = play.prepare_round(context, _request(judge="alpha"))
    handled: list[RoundEvent] = []
    done = asyncio.run(play.play_to_end(context, prepared, handled.append))
    assert done.status == RoundStatus.COMPLETE and isinstance(handled[-1], RoundFinished)
    assert sorted(closed) == ["alpha", "beta"]  # one client per model, each closed once


def test_keep_unsaved_writes_the_round_outside_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    kept = play.keep_unsaved(make_round(0, round_id="r-kept"))
    assert kept == tmp_path / "ebtui-unsaved" / "r-kept.json" and "r-kept" in kept.read_text(encoding="utf-8")
    assert play.keep_unsaved(None) is None


# -- review ----------------------------------------------------------------------------------------------------
def test_correct_accept_and_accept_all_on_the_rounds_own_judgment(ctx: AppContext) -> None:
    ctx.store.save_round(make_round(0, round_id="r-1", missing=("consistency",)))
    done = review.correct(ctx, "r-1", "b", "Consistency", "3", "too generous")
    assert done.judgment.effective_scores("b").consistency == 3 and done.judgment.parsed_scores("b").consistency == 6
    assert ctx.store.load_round("r-1").judgment.effective_scores("b").consistency == 3  # type: ignore[union-attr]
    one = review.accept(ctx, "r-1", "a", "consistency", "no score was given")
    assert one.added == 1 and one.round.id == "r-1"
    every = review.accept_all(ctx, "r-1", "checked")
    assert every.added == 2 * len(CRITERIA) - 2  # all but the overridden and the accepted one
    cleared = review.correct(ctx, "r-1", "b", "consistency", None, "", clear=True)
    assert cleared.judgment.effective_scores("b").consistency == 6
    with pytest.raises(review.OverrideError, match="a note is required"):
        review.correct(ctx, "r-1", "a", "consistency", 7, "  ")
    with pytest.raises(review.OverrideError, match="whole number from 1 to 10"):
        review.check_correction("a", "consistency", "11", "why")


def test_review_of_an_added_judgment_by_its_key(ctx: AppContext) -> None:
    r = make_round(0, round_id="r-2")
    r.extra_judgments = [Judgment(team_a_scores=Scores(**dict.fromkeys(CRITERIA, 2)),
                                  team_b_scores=Scores(**dict.fromkeys(CRITERIA, 9)), judge_model="judge-two",
                                  key="j-2", origin="rejudge")]
    ctx.store.save_round(r)
    done = review.correct(ctx, "r-2", "a", "consistency", 5, "re-read", judgment_key="j-2")
    assert done.judgment.key == "j-2" and done.judgment.effective_scores("a").consistency == 5
    assert done.round.extra_judgments[0].effective_scores("a").consistency == 5
    assert done.round.judgment is not None and not done.round.judgment.active_overrides()
    accepted = review.accept_all(ctx, "r-2", judgment_key="j-2")
    assert accepted.added == 2 * len(CRITERIA) - 1
    with pytest.raises(review.OverrideError, match="no judgment with key 'j-9'"):
        review.accept(ctx, "r-2", "a", "consistency", judgment_key="j-9")
    assert review.target("Team B", "Consistency") == ("b", "consistency")


# -- rounds: browse, check -------------------------------------------------------------------------------------
def test_list_rounds_filters_and_names_a_bad_filter(ctx: AppContext) -> None:
    ctx.store.save_round(make_round(0, round_id="r-a", dilemma="d1", team_a="alpha"))
    ctx.store.save_round(make_round(1, round_id="r-b", dilemma="d2", team_a="beta", team_b="alpha"))
    assert [e["id"] for e in rounds.list_rounds(ctx).entries] == ["r-a", "r-b"]
    assert [e["id"] for e in rounds.list_rounds(ctx, newest_first=True, limit=1).entries] == ["r-b"]
    assert [e["id"] for e in rounds.list_rounds(ctx, model="alpha", role="team_b").entries] == ["r-b"]
    assert rounds.list_rounds(ctx).unreadable == []
    with pytest.raises(UsageError, match="--role needs --model"):
        rounds.list_rounds(ctx, role="judge")
    with pytest.raises(UsageError):
        rounds.list_rounds(ctx, status="no-such-status")
    assert rounds.load_round(ctx, "r-b").team_a_model == "beta"
    with pytest.raises(rounds.StoreError):
        rounds.load_round(ctx, "r-none")


def test_check_reports_a_missing_store_and_a_healthy_one(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no results store at"):
        rounds.check(open_context(store=tmp_path / "nowhere"))
    store = ResultsStore(tmp_path / "s", durable=False)
    store.save_round(make_round(0, round_id="r-x"))
    store.close()
    report = rounds.check(open_context(store=tmp_path / "s"))
    assert report.ok and report.rounds == 1


# -- dilemmas and models ---------------------------------------------------------------------------------------
def test_documents_and_dilemma_lookup(tmp_path: Path) -> None:
    bad = tmp_path / "bad.docx"
    bad.write_text("not a docx", encoding="utf-8")
    with pytest.raises(UsageError, match="bad.docx"):
        dilemmas.open_document(bad)
    with pytest.raises(UsageError, match="bad.docx"):
        dilemmas.app_dilemmas(bad)
    builtin = dilemmas.open_document(None)
    assert builtin.dilemmas and dilemmas.find_dilemma(builtin.dilemmas, builtin.dilemmas[0].id.upper(), "x") \
        == builtin.dilemmas[0]
    assert dilemmas.app_dilemmas(None) == builtin.dilemmas


def test_model_choices_and_a_bad_models_file(tmp_path: Path) -> None:
    context = open_context(store=tmp_path / "s")
    choices = models.model_choices(models.load_models(context))
    assert {"local", "scripted"} <= set(choices.names) and choices.default in choices.names
    assert all(seat in choices.names for seat in choices.seats)
    assert choices.details["scripted"] == ""  # the name says it all
    bad = tmp_path / "models.toml"
    bad.write_text("[models.x]\nprovider = 'nope'\n", encoding="utf-8")
    with pytest.raises(UsageError, match="models.toml"):
        models.load_models(open_context(store=tmp_path / "s", models_file=bad))


def test_check_model_says_a_missing_key_without_a_call(tmp_path: Path) -> None:
    bad = tmp_path / "models.toml"
    bad.write_text("[models.keyed]\nprovider = 'openai'\nmodel = 'm'\napi_key_env = 'EBTUI_TEST_NO_KEY'\n",
                   encoding="utf-8")
    config = models.load_models(open_context(store=tmp_path / "s", models_file=bad))
    results = asyncio.run(models.check_models([config.models["keyed"], config.models["scripted"]], 16))
    assert [(r.name, r.ok) for r in results] == [("keyed", False), ("scripted", True)]
    assert "EBTUI_TEST_NO_KEY" in results[0].detail and results[1].latency_s is not None
