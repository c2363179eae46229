"""A tournament generated from known truth: model skills, judge severities, a same-family preference, dilemma
difficulties, criterion levels and noise. Real Round records (saved in a real store by the tests), integer
scores 1-10 as judges give them. Used by tests/unit/analysis/test_analysis_recovery.py."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ebtui.core.records import CRITERIA, Round
from tests.support.factories import planted_scores, scored_round


@dataclass
class Truth:
    skill: dict[str, float]  # the model's true mean at the average judge/dilemma, no family preference
    family: dict[str, str]
    severity: dict[str, float]  # judge -> offset (sums to 0 over the judges)
    family_pref: float
    dilemma_sd: float = 0.4
    criterion_sd: float = 0.3
    noise_sd: float = 1.0
    seat_gap: float = 0.3  # Team A minus Team B
    dilemma_effect: dict[str, float] = field(default_factory=dict)

    def pair_diffs(self, values: dict[str, float]) -> dict[tuple[str, str], float]:
        names = sorted(values)
        return {(a, b): values[a] - values[b] for i, a in enumerate(names) for b in names[i + 1:]}


def default_truth() -> Truth:
    """Four models of three families; the judges are the models themselves (never their own rounds)."""
    skill = {"claude-x": 7.4, "gpt-y": 6.6, "gemini-z": 6.1, "claude-w": 5.7}
    family = {"claude-x": "anthropic", "gpt-y": "openai", "gemini-z": "google", "claude-w": "anthropic"}
    sev = {"claude-x": -0.6, "gpt-y": 0.5, "gemini-z": 0.3, "claude-w": -0.2}
    return Truth(skill, family, sev, family_pref=0.3)


def generate(truth: Truth, *, dilemmas: int = 6, repeats: int = 1, seed: int = 0,
             tournament_id: str = "t-truth", self_debates: bool = True, rotate: bool = False) -> list[Round]:
    """Every ordered pairing (plus self-debates) on every dilemma, `repeats` times, each judged by every
    model that is not on a team (a panel; `rotate`: one of them, in turn). Scores are integers 1-10, rounded from the truth plus noise."""
    rng = np.random.default_rng(seed)
    models = sorted(truth.skill)
    d_ids = [f"d{i + 1}" for i in range(dilemmas)]
    truth.dilemma_effect = {d: float(rng.normal(0, truth.dilemma_sd)) for d in d_ids}
    crit = dict(zip(CRITERIA, rng.normal(0, truth.criterion_sd, len(CRITERIA)), strict=True))
    crit = {c: v - float(np.mean(list(crit.values()))) for c, v in crit.items()}  # average criterion: 0
    pairings = [(a, b) for a in models for b in models if a != b or self_debates]
    rounds: list[Round] = []
    k = 0
    for d in d_ids:
        for _rep in range(repeats):
            for a, b in pairings:
                k += 1
                ex = f"x{k:04d}"
                judges = [j for j in truth.severity if j not in (a, b)]
                if rotate:
                    judges = [judges[k % len(judges)]]
                for j in judges:
                    scores = {}
                    for team, m in (("a", a), ("b", b)):
                        base = (truth.skill[m] + truth.severity[j] + truth.dilemma_effect[d]
                                + (truth.seat_gap / 2 if team == "a" else -truth.seat_gap / 2)
                                + (truth.family_pref if truth.family[m] == truth.family[j] else 0.0))
                        vals = base + np.array([crit[c] for c in CRITERIA]) + rng.normal(0, truth.noise_sd, 7)
                        scores[team] = planted_scores(vals)
                    rounds.append(scored_round(f"r-{ex}-{j}", d, a, b, j, scores["a"], scores["b"],
                                               tournament_id=tournament_id, exchange_id=ex,
                                               schedule_key=f"{d}|{a}|{b}|{_rep}|{j}"))
    return rounds


def true_adjusted_means(truth: Truth) -> dict[str, float]:
    """What the adjusted mean estimates: skill at the average of the planted judges, dilemma effect 0."""
    avg_sev = float(np.mean(list(truth.severity.values())))
    return {m: s + avg_sev for m, s in truth.skill.items()}


def true_offsets(truth: Truth) -> dict[str, float]:
    avg_sev = float(np.mean(list(truth.severity.values())))
    return {j: s - avg_sev for j, s in truth.severity.items()}
