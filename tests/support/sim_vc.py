"""Tournaments generated from planted variance components (dilemma, model x dilemma, exchange, judge,
judge x model, residual) on a real schedule (ebtui.core.tournament.schedule.build_schedule): Round records with
integer 1-10 scores, as judges give them. Used by the variance-component and planning tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ebtui.core.records import CRITERIA, Round
from ebtui.core.tournament.schedule import Exchange, build_schedule
from tests.support.factories import planted_scores, scored_round


@dataclass
class Planted:
    skill: dict[str, float]
    vc: dict[str, float]  # variances: dilemma, model_dilemma, exchange, judge, judge_model, residual
    seat_gap: float = 0.2
    judges: list[str] = field(default_factory=list)  # empty: the models judge

    @property
    def judge_pool(self) -> list[str]:
        return self.judges or sorted(self.skill)


def planted(skill: Sequence[float] = (6.8, 6.5, 6.2, 5.9), **vc: float) -> Planted:
    base = {"dilemma": 0.25, "model_dilemma": 0.12, "exchange": 0.12, "judge": 0.2, "judge_model": 0.03,
            "residual": 0.25}
    base.update(vc)
    return Planted({f"m{i + 1}": s for i, s in enumerate(skill)}, base)


def schedule_for(p: Planted, *, dilemmas: int, judges: str = "rotate", repeats: int = 1,
                 seed: int = 0) -> list[Exchange]:
    return build_schedule(sorted(p.skill), [f"d{i + 1:02d}" for i in range(dilemmas)], judges=judges,
                          rounds_per_pairing=repeats, seed=seed).exchanges


class Draw:
    """One realisation of the random effects (so extra work on the same tournament sees the same dilemmas,
    judges and answers)."""

    def __init__(self, p: Planted, seed: int) -> None:
        self.p = p
        self.rng = np.random.default_rng(seed)
        self._cache: dict[tuple[str, ...], float] = {}
        self.crit = self.rng.normal(0, 0.3, len(CRITERIA))
        self.crit -= self.crit.mean()

    def effect(self, kind: str, *key: str) -> float:
        k = (kind, *key)
        if k not in self._cache:
            self._cache[k] = float(self.rng.normal(0, np.sqrt(self.p.vc.get(kind, 0.0))))
        return self._cache[k]

    def round_for(self, ex: Exchange, judge: str, tournament_id: str = "t-vc") -> Round:
        p = self.p
        scores = {}
        for team, m in (("a", ex.team_a), ("b", ex.team_b)):
            ekey = f"{ex.dilemma_id}|{ex.team_a}|{ex.team_b}|{ex.repeat}|{team}"
            base = (p.skill[m] + self.effect("dilemma", ex.dilemma_id)
                    + self.effect("model_dilemma", m, ex.dilemma_id) + self.effect("exchange", ekey)
                    + self.effect("judge", judge) + self.effect("judge_model", judge, m)
                    + (p.seat_gap / 2 if team == "a" else -p.seat_gap / 2))
            # the judgment's residual: shared by its criteria (sd r1) plus each criterion's own (sd r2), with
            # var(mean of the 7) = r1^2 + r2^2 / 7 = residual
            r1 = np.sqrt(p.vc.get("residual", 0.0) * 0.5)
            r2 = np.sqrt(p.vc.get("residual", 0.0) * 0.5 * 7)
            vals = base + self.crit + self.rng.normal(0, r1) + self.rng.normal(0, r2, len(CRITERIA))
            scores[team] = planted_scores(vals)
        key = f"{ex.dilemma_id}|{ex.team_a}|{ex.team_b}|{ex.repeat}"
        safe = key.replace("|", "-")
        return scored_round(f"r-{safe}-{judge}", ex.dilemma_id, ex.team_a, ex.team_b, judge, scores["a"], scores["b"],
                            dilemma_title=ex.dilemma_id, tournament_id=tournament_id, exchange_id=f"x-{safe}",
                            schedule_key=f"{key}|{judge}")

    def rounds(self, exchanges: Sequence[Exchange]) -> list[Round]:
        return [self.round_for(ex, j) for ex in exchanges for j in ex.judges]


def generate(p: Planted, *, dilemmas: int, judges: str = "rotate", repeats: int = 1, seed: int = 0) -> list[Round]:
    return Draw(p, seed).rounds(schedule_for(p, dilemmas=dilemmas, judges=judges, repeats=repeats, seed=seed))


#: what the integer rounding of the seven criteria adds to the residual of their mean (1/12 / 7)
ROUNDING = 1.0 / 84.0


@dataclass
class Coverage:
    """Over seeds, per component: the raw estimates, and whether each non-blank interval held the truth."""

    truth: dict[str, float]
    raw: dict[str, list[float]] = field(default_factory=dict)
    hits: dict[str, list[bool]] = field(default_factory=dict)
    blank: dict[str, int] = field(default_factory=dict)

    def rate(self, k: str) -> float:
        return float(np.mean(self.hits[k])) if self.hits.get(k) else float("nan")

    def bias_in_sd(self, k: str) -> float:
        """The mean raw estimate's distance from the truth, in standard deviations of one estimate."""
        v = np.asarray(self.raw[k])
        return float(abs(v.mean() - self.truth[k]) / v.std(ddof=1))

    def table(self) -> str:
        return "\n".join(f"{k:14s} truth {t:.3f} mean {np.mean(self.raw[k]):.3f} sd {np.std(self.raw[k]):.3f} cover {self.rate(k):.3f} "
                         f"({len(self.hits.get(k, []))}, blank {self.blank.get(k, 0)})" for k, t in self.truth.items())


def component_coverage(p: Planted, *, dilemmas: int, judges: str = "panel", seeds: Sequence[int],
                       replicates: int = 60, drop: float = 0.0, sparse_judge: str | None = None) -> Coverage:
    """Estimate the components (ebtui.core.analysis.variance) of tournaments planted from `p` and check each
    interval against the planted value. `drop`: the share of team scores lost at random (missing cells);
    `sparse_judge`: a judge whose scores are kept on the first dilemma only."""
    from ebtui.core.analysis.variance import COMPONENTS, estimate_components, judgment_rows

    truth = {k: p.vc.get(k, 0.0) + (ROUNDING if k == "residual" else 0.0) for k in COMPONENTS}
    out = Coverage(truth, {k: [] for k in COMPONENTS}, {k: [] for k in COMPONENTS}, dict.fromkeys(COMPONENTS, 0))
    for seed in seeds:
        rows = judgment_rows(generate(p, dilemmas=dilemmas, judges=judges, seed=seed), lambda m: m)
        rng = np.random.default_rng(seed + 7919)
        rows = [r for r in rows if rng.random() >= drop and (r.judge != sparse_judge or r.dilemma == "d01")]
        vc = estimate_components(rows, replicates=replicates, seed=seed)
        # an exchange scored once: its variance is inside the residual's
        inside = truth["exchange"] if vc.components["exchange"].variance is None else 0.0
        for k in COMPONENTS:
            c = vc.components[k]
            if c.raw is not None:
                out.raw[k].append(c.raw - (inside if k == "residual" else 0.0))
            if c.low is None or c.high is None:
                out.blank[k] += 1
            else:
                out.hits[k].append(c.low <= truth[k] + (inside if k == "residual" else 0.0) <= c.high)
    return out
