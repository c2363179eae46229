"""The concepts the domain owns, each worked out in one place: a model's family (ebtui.core.families), the
phases a team speaks in, a round's exchange and a judgment's scores by view (ebtui.core.facts), and a
judgment's review checklist as the one form a writer gives (ebtui.core.records.Judgment)."""

from __future__ import annotations

from pathlib import Path

from ebtui.config import ModelsConfig, load_models_config
from ebtui.core.facts import TEAM_PHASES, exchange_key, scores, seat_phases
from ebtui.core.families import (
    configured_family,
    family_function,
    newest_recorded,
    resolve_families,
    round_families,
)
from ebtui.core.records import (
    PHASE_ORDER,
    PHASE_SPEAKER,
    Judgment,
    Override,
    PhaseType,
    ReviewReason,
    Scores,
)
from tests.support.factories import make_round, recording_round


def _models(tmp_path: Path) -> ModelsConfig:
    path = tmp_path / "models.toml"
    path.write_text('[models.house]\nprovider = "openai_compatible"\nbase_url = "http://x/v1"\nmodel = "m"\n'
                    'family = "Mistral"\n[models.plain]\nprovider = "openai_compatible"\nbase_url = "http://x/v1"\n'
                    'model = "m"\n[models.claude-x]\nprovider = "openai"\nmodel = "c"\n', encoding="utf-8")
    return load_models_config(path)


def test_family_precedence_models_toml_then_provider_then_recorded_then_the_name(tmp_path: Path) -> None:
    config = _models(tmp_path)
    recorded = {"house": "ignored", "old-judge": "Cohere", "gpt-5": "mine"}
    got = resolve_families(["house", "plain", "claude-x", "old-judge", "gpt-5", "gemini-2", "mystery"], config,
                           recorded)
    assert got == {
        "house": "mistral",  # models.toml family (lower-cased), over what a round recorded
        "plain": "openai_compatible",  # no family: the provider
        "claude-x": "openai",  # a configured provider wins over the name
        "old-judge": "cohere",  # not configured: recorded in the rounds
        "gpt-5": "mine",  # recorded wins over the name heuristic
        "gemini-2": "google",  # known to neither: the name
        "mystery": "mystery",  # a family of one
    }
    assert configured_family(config.get("house")) == "Mistral"  # what a round records: as written
    assert configured_family(config.get("plain")) == "openai_compatible"


def test_the_newest_recorded_family_wins_whatever_the_order_given() -> None:
    pairs = [("2026-01-03", {"m": "new"}), ("2026-01-01", {"m": "old", "j": "judges"}), ("2026-01-02", None)]
    assert newest_recorded(pairs) == {"m": "new", "j": "judges"}
    assert newest_recorded(reversed(pairs)) == {"m": "new", "j": "judges"}


def test_round_families_reads_the_seats_and_what_the_rounds_recorded(tmp_path: Path) -> None:
    older = recording_round(0, {"alpha": "First", "gamma": "judges"})
    newer = recording_round(5, {"alpha": "Second"})
    rounds = [newer, older, make_round(2, team_a="claude-3", team_b="beta", judge="gpt-4o")]
    assert round_families(rounds) == {"alpha": "second", "beta": "beta", "gamma": "judges",
                                      "claude-3": "anthropic", "gpt-4o": "openai"}
    config = _models(tmp_path)
    assert round_families([recording_round(0, {"house": "Other"}, team_a="house")], config)["house"] == "mistral"
    lookup = family_function({"alpha": "x"})
    assert (lookup("alpha"), lookup("llama-3")) == ("x", "meta")  # a name the mapping lacks: the heuristic


def test_team_phases_follow_the_speaker_table() -> None:
    assert seat_phases("a") == (PhaseType.PRESENTATION, PhaseType.REBUTTAL, PhaseType.CONSISTENCY_TEST)
    assert seat_phases("b") == (PhaseType.RESPONSE,)
    assert [pt for pt, _ in TEAM_PHASES] == [pt for pt in PHASE_ORDER if PHASE_SPEAKER[pt] != "judge"]
    assert all(PHASE_SPEAKER[pt] == team for pt, team in TEAM_PHASES)


def test_exchange_key_and_scores_by_view() -> None:
    r = make_round(1)
    assert exchange_key(r) == r.id
    r.exchange_id = "ex-1"
    assert exchange_key(r) == "ex-1"
    j = Judgment(team_a_scores=Scores(consistency=4), team_b_scores=Scores(consistency=6),
                 overrides=[Override(team="a", criterion="consistency", parsed_value=4, value=9, note="n")])
    assert scores(j, "a", effective=False).consistency == 4
    assert scores(j, "a", effective=True).consistency == 9
    assert scores(j, "b", effective=True).consistency == 6


def test_a_judgment_written_from_its_checklist_gets_the_plain_copies_once() -> None:
    items = [ReviewReason(team="a", criterion="consistency", kind="missing", message="Team A Consistency: missing"),
             ReviewReason(kind="parser", message="twice"), ReviewReason(team="b", kind="prose", message="twice")]
    j = Judgment(review_items=items)
    assert j.needs_review is True and j.review_reasons == ["Team A Consistency: missing", "twice"]
    assert not Judgment().needs_review and Judgment().review_reasons == []
    # what a file says is kept as it is (older files, and files whose copies differ)
    kept = Judgment(review_items=items[:1], needs_review=False, review_reasons=["as saved"])
    assert (kept.needs_review, kept.review_reasons) == (False, ["as saved"])
    loaded = Judgment.model_validate_json(kept.model_dump_json())
    assert loaded.model_dump() == kept.model_dump()
