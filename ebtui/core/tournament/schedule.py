"""The tournament schedule: who presents, responds and judges what, deterministic given the seed. Every
ordered pairing plays every chosen dilemma, optionally self-debates, N repeats per pairing; judges
(rotate, panel or a list) never judge a round they play in. See docs/TOURNAMENTS.md.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

__all__ = [
    "Exchange",
    "Schedule",
    "ScheduleError",
    "ScheduledRound",
    "build_schedule",
    "make_schedule",
]

if TYPE_CHECKING:
    from ebtui.core.records import Dilemma
    from ebtui.core.tournament.config import TournamentConfig

Role = Literal["presenting", "responding", "judging"]


class ScheduleError(Exception):
    """The schedule cannot be made (e.g. no judge for a pairing); the message names the pairing."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """Where an exchange sits in the schedule: a dilemma, team A, team B and the repeat."""

    dilemma_id: str
    team_a: str
    team_b: str
    repeat: int

    @property
    def exchange_key(self) -> str:
        return f"{self.dilemma_id}|{self.team_a}|{self.team_b}|{self.repeat}"


@dataclass(frozen=True, slots=True)
class ScheduledRound(Pairing):
    """One judged round: a (dilemma, team A, team B, repeat) exchange seen by one judge."""

    judge: str
    #: the first judge of an exchange runs phases 1-4; the others only judge (a panel)
    primary: bool = True

    @property
    def schedule_key(self) -> str:
        """Stable within a tournament: resume finds a round by it."""
        return f"{self.exchange_key}|{self.judge}"

    def round_id(self, tournament_id: str) -> str:
        """Deterministic, so a re-run continues (overwrites) the same round file, never duplicates it."""
        digest = hashlib.sha256(f"{tournament_id}\x1f{self.schedule_key}".encode()).hexdigest()[:12]
        return f"{tournament_id}-r-{digest}"


@dataclass(frozen=True, slots=True)
class Exchange(Pairing):
    """Phases 1-4 between two teams on a dilemma, judged by one judge (rotate) or several (panel)."""

    judges: tuple[str, ...]

    @property
    def rounds(self) -> list[ScheduledRound]:
        return [
            ScheduledRound(self.dilemma_id, self.team_a, self.team_b, self.repeat, j, primary=i == 0)
            for i, j in enumerate(self.judges)
        ]


@dataclass
class Schedule:
    exchanges: list[Exchange]
    models: list[str]
    dilemma_ids: list[str]
    judge_mode: str
    notes: list[str] = field(default_factory=list)

    @property
    def rounds(self) -> list[ScheduledRound]:
        return [r for ex in self.exchanges for r in ex.rounds]

    def __len__(self) -> int:
        return sum(len(ex.judges) for ex in self.exchanges)

    def calls_by_model_role(self) -> dict[str, Counter[str]]:
        """Model calls the schedule makes, per model and role: presenting = Team A's presentation,
        rebuttal and consistency test (3 calls), responding = Team B's response (1), judging = 1 per judge."""
        out: dict[str, Counter[str]] = {}
        for ex in self.exchanges:
            out.setdefault(ex.team_a, Counter())["presenting"] += 3
            out.setdefault(ex.team_b, Counter())["responding"] += 1
            for j in ex.judges:
                out.setdefault(j, Counter())["judging"] += 1
        return out

    def judge_counts(self) -> Counter[str]:
        return Counter(j for ex in self.exchanges for j in ex.judges)


def build_schedule(
    models: list[str],
    dilemma_ids: list[str],
    *,
    judges: str | list[str] = "rotate",
    self_debates: bool = False,
    rounds_per_pairing: int = 1,
    seed: int = 0,
) -> Schedule:
    if not dilemma_ids:
        raise ScheduleError("no dilemmas to play")
    pairings = [(a, b) for a in models for b in models if a != b or self_debates]
    if not pairings:
        raise ScheduleError("no pairings: list at least two models, or set self_debates = true")
    explicit = isinstance(judges, list)
    mode = "list" if explicit else str(judges)
    if mode not in ("rotate", "panel", "list"):
        raise ScheduleError(f'judges must be "rotate", "panel" or a list of models, not {judges!r}')
    pool = list(judges) if explicit else list(models)

    for a, b in pairings:
        if not [j for j in pool if j not in (a, b)]:
            who = f"{a} vs {b}" if a != b else f"{a}'s self-debate"
            if explicit:
                raise ScheduleError(
                    f"no judge for {who}: every listed judge ({', '.join(pool)}) plays in it — "
                    "list a judge that does not play"
                )
            if len(models) == 2 and a != b:
                raise ScheduleError(
                    f"with only two models ({a}, {b}) there is no third to judge: add a model, or name "
                    'judges that do not play, e.g. judges = ["another-model"]'
                )
            raise ScheduleError(f"no judge for {who}: every model plays in it — add a model or list judges")

    rng = random.Random(seed)
    keys = [(d, a, b, n) for d in dilemma_ids for (a, b) in pairings for n in range(rounds_per_pairing)]
    rng.shuffle(keys)  # execution order: spreads models (and providers) over the rounds in flight
    tiebreak = {m: rng.random() for m in pool}
    load: Counter[str] = Counter()
    seen: Counter[tuple[str, str]] = Counter()  # (judge, judged model)
    exchanges: list[Exchange] = []
    for d, a, b, n in keys:
        eligible = [j for j in pool if j not in (a, b)]
        if mode == "panel":
            chosen = tuple(sorted(eligible, key=lambda j: (load[j], tiebreak[j])))
        else:
            best = min(eligible, key=lambda j: (load[j], seen[(j, a)] + seen[(j, b)], tiebreak[j]))
            chosen = (best,)
        for j in chosen:
            load[j] += 1
            seen[(j, a)] += 1
            seen[(j, b)] += 1
        exchanges.append(Exchange(d, a, b, n, chosen))
    return Schedule(exchanges=exchanges, models=list(models), dilemma_ids=list(dilemma_ids), judge_mode=mode)


def make_schedule(config: TournamentConfig, dilemmas: list[Dilemma]) -> Schedule:
    """The config's schedule over the loaded dilemmas. Raises ScheduleError naming what is wrong."""
    known = [d.id for d in dilemmas]
    if config.dilemmas == "all":
        chosen = known
    else:
        unknown = [d for d in config.dilemmas if d not in known]
        if unknown:
            where = f"{config.source}: " if config.source else ""
            raise ScheduleError(
                f"{where}field dilemmas: unknown dilemma id(s) {', '.join(unknown)} (the document has: "
                f"{', '.join(known) or 'none'})"
            )
        chosen = list(config.dilemmas)
    try:
        return build_schedule(
            config.models,
            chosen,
            judges=config.judges,
            self_debates=config.self_debates,
            rounds_per_pairing=config.rounds_per_pairing,
            seed=config.seed,
        )
    except ScheduleError as exc:
        where = f"{config.source}: " if config.source else ""
        raise ScheduleError(f"{where}{exc}") from None
