"""The one definition of "mean per model" (and per model and criterion) that every front end uses: every
score a model's teams received, in both seats, each judge of a panel once, missing scores left out;
`effective` chooses parsed or overridden scores. The report, the CSVs, `report --json`, the TUI's
analysis view and the tournament summary all call these functions, so the number is the same everywhere.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ebtui.core.facts import exchange_key, team_models
from ebtui.core.facts import scores as scores_in_view
from ebtui.core.records import CRITERIA, Round, Team

SEATS: tuple[Team, Team] = ("a", "b")


@dataclass(frozen=True)
class ModelMean:
    model: str
    mean: float | None  # mean of the scores (None: no score at all)
    n_scores: int  # scores that went in
    n_rounds: int  # judged rounds in which the model sat at a team seat and got at least one score
    n_exchanges: int  # distinct debates among those rounds (a judge panel is one exchange)
    n_dilemmas: int


def plays_in(r: Round, model: str) -> bool:
    """True when the model sat at Team A or Team B (judging alone does not count)."""
    return model in (r.team_a_model, r.team_b_model)


def rounds_with_team_seat(rounds: Iterable[Round], model: str) -> list[Round]:
    """`--model M`: the rounds where M is Team A or Team B — not the rounds M only judged."""
    return [r for r in rounds if plays_in(r, model)]


def seat_scores(r: Round, team: Team, effective: bool) -> dict[str, int | None] | None:
    if r.judgment is None:
        return None
    return scores_in_view(r.judgment, team, effective=effective).as_dict()


def model_means(rounds: Sequence[Round], *, effective: bool) -> dict[str, ModelMean]:
    """model -> its raw mean over every score its teams received (see the module docstring)."""
    vals: dict[str, list[int]] = defaultdict(list)
    rounds_of: dict[str, set[str]] = defaultdict(set)
    exchanges_of: dict[str, set[str]] = defaultdict(set)
    dilemmas_of: dict[str, set[str]] = defaultdict(set)
    models: set[str] = set()
    for r in rounds:
        for team, model in team_models(r).items():
            models.add(model)
            scores = seat_scores(r, team, effective)
            given = [v for v in (scores or {}).values() if v is not None]
            if not given:
                continue
            vals[model].extend(given)
            rounds_of[model].add(r.id)
            exchanges_of[model].add(exchange_key(r))
            dilemmas_of[model].add(r.dilemma_id)
    return {
        m: ModelMean(m, (sum(vals[m]) / len(vals[m])) if vals[m] else None, len(vals[m]), len(rounds_of[m]),
                     len(exchanges_of[m]), len(dilemmas_of[m]))
        for m in sorted(models)
    }


def model_criterion_means(rounds: Sequence[Round], *, effective: bool) -> dict[tuple[str, str], tuple[float | None, int]]:
    """(model, criterion) -> (mean, n) over every score of that criterion the model's teams received."""
    vals: dict[tuple[str, str], list[int]] = defaultdict(list)
    models: set[str] = set()
    for r in rounds:
        for team, model in team_models(r).items():
            models.add(model)
            for c, v in (seat_scores(r, team, effective) or {}).items():
                if v is not None:
                    vals[(model, c)].append(v)
    out: dict[tuple[str, str], tuple[float | None, int]] = {}
    for m in sorted(models):
        for c in CRITERIA:
            got = vals.get((m, c), [])
            out[(m, c)] = ((sum(got) / len(got)) if got else None, len(got))
    return out


__all__ = ["ModelMean", "model_means", "model_criterion_means", "rounds_with_team_seat", "plays_in"]
