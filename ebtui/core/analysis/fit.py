"""The joint model: every score explained at once by who was scored, who judged, and on what.

    score = mu + skill[model] + seat[A/B] + severity[judge] + pref * same_family + difficulty[dilemma]
            + level[criterion] + error

fitted by ordinary least squares (statsmodels OLS) on the long table of the judges' scores: one row per round x
team x criterion. Every factor uses sum-to-zero (deviation) coding, so `mu + skill[m]` is model m's score at the
average judge, the average dilemma, the average seat and the average criterion, with no family preference —
the "adjusted mean". A judge's severity is its offset from the average judge (the offsets sum to zero).
`same_family` is 1 when the judge's family (ebtui.core.analysis.families) is the scored model's family.

Why a joint fit: a model never judges its own rounds, so each model is scored by a different mix of judges,
and raw means mix skill with the judges' severity; judges compared with their co-judges inherit the
co-judges' leniency; a family preference computed from raw differences is confounded with the models' skill.

Intervals come from ebtui.core.analysis.bootstrap (a cluster bootstrap over dilemmas). See docs/STATISTICS.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import statsmodels.api as sm

from ebtui.core.analysis.common import Coverage, coverage
from ebtui.core.analysis.identify import identify_design
from ebtui.core.records import Round, Team

SEAT_LABEL: dict[Team, str] = {"a": "A", "b": "B"}


@dataclass(frozen=True)
class Obs:
    """One score: a round, a team (seat), a criterion."""

    round_id: str
    exchange_id: str
    dilemma: str
    model: str
    seat: Team
    judge: str
    criterion: str
    score: float
    same_family: bool


@dataclass
class Excluded:
    """What did not go into the fit, and why."""

    rounds: int = 0  # rounds given
    without_judgment: int = 0  # failed or incomplete rounds: no judgment to read
    without_scores: int = 0  # a judgment that gave (in this view) no score at all
    scores_expected: int = 0  # 2 teams x 7 criteria per judged round
    scores_missing: int = 0

    def describe(self) -> str:
        return (f"{self.without_judgment + self.without_scores} of {self.rounds} rounds excluded "
                f"({self.without_judgment} without a judgment — failed or incomplete —, {self.without_scores} "
                f"whose judgment gave no score); {self.scores_missing} of {self.scores_expected} scores missing "
                "and left out (never counted as 0)")

    @classmethod
    def of(cls, cov: Coverage) -> Excluded:
        return cls(rounds=cov.rounds, without_judgment=cov.rounds_without_judgment,
                   without_scores=cov.rounds_without_any_score, scores_expected=cov.scores_expected,
                   scores_missing=cov.scores_missing)

    def as_dict(self) -> dict[str, int]:
        return {"rounds": self.rounds, "rounds_without_judgment": self.without_judgment,
                "rounds_without_scores": self.without_scores, "scores_expected": self.scores_expected,
                "scores_missing": self.scores_missing}


def observations(rounds: Sequence[Round], family_of: Callable[[str], str], *,
                 effective: bool = False) -> tuple[list[Obs], Excluded]:
    """The long table. `effective=False` (the default): the judges' parsed scores; True: overrides applied.
    What is left out is counted once, by analysis.common.coverage (the same count every table reports)."""
    rounds = list(rounds)
    obs: list[Obs] = []
    for r in rounds:
        if r.judgment is None:
            continue
        seats: tuple[tuple[Team, str], ...] = (("a", r.team_a_model), ("b", r.team_b_model))
        for team, model in seats:
            s = r.judgment.effective_scores(team) if effective else r.judgment.parsed_scores(team)
            same = family_of(model) == family_of(r.judge_model)
            obs.extend(Obs(r.id, r.exchange_id or r.id, r.dilemma_id, model, team, r.judge_model, c, float(v), same)
                       for c, v in s.as_dict().items() if v is not None)
    return obs, Excluded.of(coverage(rounds, effective))


def sum_code(idx: np.ndarray, k: int) -> np.ndarray:
    """Deviation (sum-to-zero) coding of level indices 0..k-1: k-1 columns; the last level is -1 everywhere."""
    out = np.zeros((len(idx), max(k - 1, 0)))
    if k <= 1:
        return out
    for j in range(k - 1):
        out[idx == j, j] = 1.0
    out[idx == k - 1, :] = -1.0
    return out


def effects(coefs: np.ndarray) -> np.ndarray:
    """All k level effects from the k-1 sum-coded coefficients (the last is minus the sum of the others)."""
    return np.append(coefs, -np.sum(coefs))


@dataclass
class Design:
    """The fit's data in numbers: levels, their row indices, and the fixed (non-dilemma) part of the design."""

    obs: list[Obs]
    models: list[str]
    judges: list[str]
    dilemmas: list[str]
    criteria: list[str]
    y: np.ndarray
    model_idx: np.ndarray
    judge_idx: np.ndarray
    dilemma_idx: np.ndarray
    seat: np.ndarray  # +1 Team A, -1 Team B
    family: np.ndarray  # 1.0 same family
    crit_idx: np.ndarray
    has_seat: bool = False
    has_family: bool = False
    notes: list[str] = field(default_factory=list)
    #: what the design identifies (ebtui.core.analysis.identify.Identification), set by `fit`
    identification: Any = field(default=None, repr=False)

    @classmethod
    def build(cls, obs: list[Obs]) -> Design:
        def levels(values: list[str]) -> tuple[list[str], np.ndarray]:
            names = sorted(set(values))
            pos = {n: i for i, n in enumerate(names)}
            return names, np.array([pos[v] for v in values], dtype=int)

        models, mi = levels([o.model for o in obs])
        judges, ji = levels([o.judge for o in obs])
        dilemmas, di = levels([o.dilemma for o in obs])
        criteria, ci = levels([o.criterion for o in obs])
        seat = np.array([1.0 if o.seat == "a" else -1.0 for o in obs])
        fam = np.array([1.0 if o.same_family else 0.0 for o in obs])
        d = cls(obs, models, judges, dilemmas, criteria, np.array([o.score for o in obs]), mi, ji, di, seat, fam, ci)
        d.has_seat = len(set(seat.tolist())) == 2
        d.has_family = 0 < fam.sum() < len(fam)
        if not d.has_family:
            d.notes.append("same-family preference not estimable: "
                           + ("no team was scored by a judge of its own family" if fam.sum() == 0
                              else "every team was scored by a judge of its own family"))
        return d

    def fixed_part(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Columns: intercept, model, seat, judge, family, criterion (the dilemma block is added per fit)."""
        parts = [np.ones((len(self.y[rows]), 1)), sum_code(self.model_idx[rows], len(self.models))]
        if self.has_seat:
            parts.append(self.seat[rows][:, None])
        parts.append(sum_code(self.judge_idx[rows], len(self.judges)))
        if self.has_family:
            parts.append(self.family[rows][:, None])
        parts.append(sum_code(self.crit_idx[rows], len(self.criteria)))
        return np.hstack(parts)


@dataclass
class Estimates:
    """The quantities the report shows, from one fit."""

    adjusted: np.ndarray  # per model: mu + skill
    offsets: np.ndarray  # per judge: severity (sums to 0)
    family_pref: float  # nan when not estimable
    seat_gap: float  # Team A minus Team B, other things equal (nan without both seats)
    difficulty: np.ndarray  # per dilemma (of the fitted sample)
    params: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    def vector(self) -> np.ndarray:
        """The bootstrapped quantities in a fixed order: models, judges, family, seat gap."""
        return np.concatenate([self.adjusted, self.offsets, [self.family_pref, self.seat_gap]])


def least_squares(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The OLS coefficients through the normal equations (for the bootstrap's many refits: the design has a
    few dozen columns of 0/±1, so X'X is small and well conditioned; singular: minimum-norm solution)."""
    xtx, xty = X.T @ X, X.T @ y
    try:
        params: np.ndarray = np.linalg.solve(xtx, xty)
    except np.linalg.LinAlgError:
        params = np.linalg.lstsq(xtx, xty, rcond=None)[0]
    return params


def solve(d: Design, X_fixed: np.ndarray, y: np.ndarray, dil_idx: np.ndarray, n_dil: int,
          *, has_family: bool, fast: bool = False) -> Estimates:
    """Fit one OLS (statsmodels; `fast`: the normal equations, same estimates) and read the estimates off its
    coefficients."""
    X = np.hstack([X_fixed, sum_code(dil_idx, n_dil)])
    if fast:
        params = least_squares(X, y)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a rank-deficient design is reported in the notes
            params = np.asarray(sm.OLS(y, X).fit().params)
    M, J = len(d.models), len(d.judges)
    k = 1
    skill = effects(params[k:k + M - 1]) if M > 1 else np.zeros(1)
    k += M - 1
    seat_gap = float("nan")
    if d.has_seat:
        seat_gap = 2.0 * float(params[k])
        k += 1
    offsets = effects(params[k:k + J - 1]) if J > 1 else np.zeros(1)
    k += J - 1
    fam = float("nan")
    if d.has_family:
        if has_family:
            fam = float(params[k])
        k += 1
    k += len(d.criteria) - 1
    difficulty = effects(params[k:k + n_dil - 1]) if n_dil > 1 else np.zeros(1)
    return Estimates(params[0] + skill, offsets, fam, seat_gap, difficulty, params)


@dataclass
class JointFit:
    design: Design
    estimates: Estimates
    excluded: Excluded
    full_rank: bool
    residual_sd: float

    def predict_gap(self) -> float:
        """What the fit expects Team A minus Team B to be when the same model plays both seats."""
        return self.estimates.seat_gap if self.design.has_seat else 0.0


def fit(rounds: Sequence[Round], family_of: Callable[[str], str], *, effective: bool = False) -> JointFit | None:
    """The joint fit over the rounds' scores (None: no score at all)."""
    obs, excluded = observations(rounds, family_of, effective=effective)
    if not obs:
        return None
    d = Design.build(obs)

    def design() -> tuple[np.ndarray, np.ndarray, bool]:
        xf = d.fixed_part()
        x = np.hstack([xf, sum_code(d.dilemma_idx, len(d.dilemmas))])
        return xf, x, int(np.linalg.matrix_rank(x)) == x.shape[1]

    # a term is dropped only when its own coefficient is not identified, and the note says why
    # (ebtui.core.analysis.identify); a disconnected design keeps its terms and blanks what it cannot identify
    ident = identify_design(d, has_seat=d.has_seat, has_family=d.has_family)
    d.has_seat, d.has_family = ident.has_seat, ident.has_family
    d.notes.extend(ident.notes)
    d.identification = ident
    X_fixed, X, full_rank = design()
    if not full_rank and ident.connected:
        d.notes.append("the design is not of full rank: the contrasts it cannot identify are left blank")
    est = solve(d, X_fixed, d.y, d.dilemma_idx, len(d.dilemmas), has_family=d.has_family)
    resid = d.y - X @ est.params
    dof = max(len(d.y) - X.shape[1], 1)
    return JointFit(d, est, excluded, full_rank, float(np.sqrt(resid @ resid / dof)))


def family_lookup(families: Mapping[str, str]) -> Callable[[str], str]:
    return lambda m: families.get(m, m)
