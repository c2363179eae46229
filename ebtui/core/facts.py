"""What a round's records say, worked out in one place: a round's exchange, who sits in which seat and
speaks in which phase, a judgment's scores as judged or after human corrections, and the one reader of
team and criterion names a human types. Everything above the records asks here instead of deriving it."""

from __future__ import annotations

import re

from ebtui.core.records import (
    CRITERIA,
    CRITERION_LABELS,
    PHASE_ORDER,
    PHASE_SPEAKER,
    Judgment,
    PhaseType,
    Round,
    Scores,
    Team,
)

TEAMS: tuple[Team, Team] = ("a", "b")


def exchange_key(round_: Round) -> str:
    """The exchange a round belongs to: the rounds judge panels made of one debate share it (a round that was
    not re-judged is its own exchange)."""
    return round_.exchange_id or round_.id


def may_resume(saved: Round, dilemma_id: str, team_a: str, team_b: str) -> bool:
    """Whether a saved round can be continued as a round of this dilemma and these teams (its judge may
    change: a judgment not yet kept is played by the new one)."""
    return (saved.dilemma_id, saved.team_a_model, saved.team_b_model) == (dilemma_id, team_a, team_b)


def seats(team_a: str, team_b: str, judge: str) -> dict[str, str]:
    """Seat ("a", "b", "judge": PHASE_SPEAKER's values) -> the model in it."""
    return {"a": team_a, "b": team_b, "judge": judge}


def round_seats(round_: Round) -> dict[str, str]:
    return seats(round_.team_a_model, round_.team_b_model, round_.judge_model)


def team_models(round_: Round) -> dict[Team, str]:
    """The two team seats of a round (the judge's seat left out): team -> model."""
    return {"a": round_.team_a_model, "b": round_.team_b_model}


def speaker(phase_type: PhaseType, seat_map: dict[str, str]) -> str:
    """The model that speaks in this phase, given the seats (`seats`/`round_seats`)."""
    return seat_map[PHASE_SPEAKER[phase_type]]


def seat_phases(seat: str) -> tuple[PhaseType, ...]:
    """The phases the seat ("a", "b" or "judge") speaks in (PHASE_SPEAKER), in the order they are played."""
    return tuple(pt for pt in PHASE_ORDER if PHASE_SPEAKER[pt] == seat)


#: every phase a team speaks in, in the order they are played, with the team that speaks
TEAM_PHASES: tuple[tuple[PhaseType, Team], ...] = tuple(
    (pt, team) for pt in PHASE_ORDER for team in TEAMS if PHASE_SPEAKER[pt] == team)


def scores(judgment: Judgment, team: Team, *, effective: bool) -> Scores:
    """A team's scores in one of the two views: as parsed from the judge's reply, or effective (the human
    overrides in force applied)."""
    return judgment.effective_scores(team) if effective else judgment.parsed_scores(team)


def _key(text: object) -> str:
    return re.sub(r"[\s-]+", "_", str(text).strip().lower())


def parse_team(team: object) -> Team:
    """"a", "B", "team a", "Team_B" -> "a"/"b"; anything else is a ValueError naming it."""
    t = str(team).strip().lower().removeprefix("team_").removeprefix("team ").removeprefix("team").strip()
    if t == "a":
        return "a"
    if t == "b":
        return "b"
    raise ValueError(f"unknown team {team!r}: expected a or b")


def parse_criterion(name: object) -> str:
    """A criterion's canonical name from its name or label in any case ("Framework awareness",
    "intellectual-honesty"), or from the first four or more letters of its name ("stake")."""
    key = _key(name)
    if key in CRITERIA:
        return key
    for crit, label in CRITERION_LABELS.items():
        if key == _key(label) or (len(key) >= 4 and crit.startswith(key)):
            return crit
    raise ValueError(f"unknown criterion {name!r}: expected one of {', '.join(CRITERIA)}")
