"""Two models side by side: `ebtui compare A B` and the TUI's compare view. `compare_models`: the
judge-adjusted difference A − B overall and per criterion, fitted on the dilemmas both were scored on, with
its interval; `dilemma_sides`: per common dilemma, one judged round of each model with their answers,
scores and the judges' reasons.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from ebtui.core.analysis.fit import Design
from ebtui.core.analysis.frame import Facts, ScoreFrame
from ebtui.core.analysis.judge_bias import expand_judgments
from ebtui.core.analysis.pairwise import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    STANDARD,
    Data,
    JudgeSample,
    compare_all,
    holm,
)
from ebtui.core.facts import scores as scores_in_view
from ebtui.core.families import family_function
from ebtui.core.records import CRITERIA, PhaseStatus, PhaseType, Round, Team


def finite(value: object) -> Any:
    """JSON has no NaN: a non-finite float becomes None (recursively through dicts and lists). The value
    comes back in the caller's shape with floats perhaps None, which no static type can say."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    # (a report's JSON holds about a million values: the plain ones are kept without a call each)
    if isinstance(value, dict):
        return {k: v if type(v) in _PLAIN or (type(v) is float and math.isfinite(v)) else finite(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _PLAIN or (type(v) is float and math.isfinite(v)) else finite(v) for v in value]
    return value


#: the types `finite` gives back unchanged
_PLAIN = frozenset({str, int, bool, type(None)})


class PairDiff(TypedDict):
    """A − B on some cells: the difference, its interval and p, or the reason they are blank."""

    diff: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    reason: str


class CompareError(ValueError):
    """A comparison that cannot be made (a model with no score); the message names what is wrong."""


def _pair(data: Data, rows: np.ndarray, a: str, b: str, seed: int, replicates: int, judges: JudgeSample,
          tests: int | None) -> PairDiff:
    """A − B on the given rows (cells) of the long table, its interval one of `tests` held together (the
    interval standard; None: the pairs of the models on these rows, as the report's pairwise table)."""
    sub = data.subset(rows) if len(rows) else None
    if sub is None or a not in sub.models or b not in sub.models:
        have = set(sub.models) if sub is not None else set()
        missing = [m for m in (a, b) if m not in have]
        return {"diff": None, "ci_low": None, "ci_high": None, "p": None,
                "reason": f"no score for {' and '.join(missing)}"}
    M = len(sub.models)
    comp = compare_all(sub, replicates=replicates, seed=seed, with_ranks=False, judges=judges,
                       tests=tests if tests is not None else M * (M - 1) // 2)
    p = comp.pair(a, b)
    assert p is not None
    return {"diff": p.diff, "ci_low": p.ci_low, "ci_high": p.ci_high, "p": p.p, "reason": p.reason}


def compare_models(rounds: Sequence[Round] | Facts, a: str, b: str, *, families: Mapping[str, str] | None = None,
                   effective: bool = False, seed: int = DEFAULT_SEED,
                   replicates: int = DEFAULT_REPLICATES) -> dict[str, Any]:
    """A − B, judge-adjusted, overall and per criterion, on the dilemmas both played (see the module doc).
    Every judgment of a round counts (`ebtui rejudge` adds them), as in the report."""
    if a == b:
        raise CompareError(f"compare needs two different models (got {a!r} twice)")
    facts = rounds if isinstance(rounds, Facts) else Facts.from_rounds(expand_judgments(rounds))
    frame = ScoreFrame.build(facts, family_function(families), effective=effective)
    design = Design.build(frame) if len(frame) else None
    data = Data.of(design.frame) if design is not None else None
    played: dict[str, set[str]] = {}
    if data is not None:
        for m, g in set(zip(data.model_idx.tolist(), data.dilemma_idx.tolist(), strict=True)):
            played.setdefault(data.models[m], set()).add(data.dilemmas[g])
    missing = [m for m in (a, b) if m not in played]
    if missing:
        known = ", ".join(sorted(played)) or "none"
        raise CompareError(f"no judged score for {' or '.join(repr(m) for m in missing)} in these rounds "
                           f"(models with scores: {known})")
    assert data is not None and design is not None
    common = sorted(played[a] & played[b])
    out: dict[str, object] = {"a": a, "b": b, "n_dilemmas": len(common), "dilemmas": common,
                              "view": "effective" if effective else "as_judged",
                              "bootstrap": {"seed": seed, "replicates": replicates, "unit": "dilemma",
                                            "confidence": 0.95}}
    if not common:
        why = f"{a} and {b} were never scored on a common dilemma"
        out |= {"diff": None, "ci_low": None, "ci_high": None, "p": None, "reason": why,
                "criteria": [{"criterion": c, "diff": None, "ci_low": None, "ci_high": None, "p": None,
                              "p_holm": None, "reason": why} for c in CRITERIA]}
        return out
    on_common = np.isin(data.dilemma_idx, [data.dilemmas.index(g) for g in common])
    judges = JudgeSample.of_frame(design.frame)
    out |= _pair(data, np.flatnonzero(on_common), a, b, seed, replicates, judges, None)
    crit_names = list(design.frame.criteria)
    crits: list[dict[str, Any]] = [{"criterion": c, **_pair(data, np.flatnonzero(
        on_common & (data.crit_idx == (crit_names.index(c) if c in crit_names else -1))), a, b, seed, replicates,
        judges, len(CRITERIA))} for c in CRITERIA]
    for c, ph in zip(crits, holm([c["p"] for c in crits]), strict=True):
        c["p_holm"] = ph
    out["criteria"] = crits
    n_models = len({data.models[m] for m in data.model_idx[on_common].tolist()})
    out["standard"] = {"overall": STANDARD.describe(n_models * (n_models - 1) // 2) + " (the report's pairwise "
                                  "table over the models scored on these dilemmas)",
                       "criteria": STANDARD.describe(len(CRITERIA)).replace("pairs", "criteria")
                                   + "; p_holm: Holm over the criteria",
                       "population": judges.population()}
    w = data.weights
    out["n_scores"] = {m: int(w[on_common & (data.model_idx == data.models.index(m))].sum()) for m in (a, b)}
    return out


# ---- side by side --------------------------------------------------------------------------------------


@dataclass
class Side:
    """One model's part of one judged round."""

    model: str
    round: Round
    team: Team
    texts: list[tuple[str, str]] = field(default_factory=list)  # (phase, answer) in play order
    scores: dict[str, int | None] = field(default_factory=dict)
    reason: str = ""  # the judge's justification for this team


@dataclass
class DilemmaSides:
    dilemma: str
    title: str
    a: Side | None
    b: Side | None
    met: bool  # the two sides are the same round (A and B debated each other)

    def differences(self) -> dict[str, int | None]:
        """Per criterion: A's score minus B's (None where either is missing)."""
        out: dict[str, int | None] = {}
        for c in CRITERIA:
            va = self.a.scores.get(c) if self.a else None
            vb = self.b.scores.get(c) if self.b else None
            out[c] = va - vb if va is not None and vb is not None else None
        return out


def _side(r: Round, model: str, effective: bool) -> Side:
    team: Team = "a" if r.team_a_model == model else "b"
    texts = [(p.phase_type.value, p.response or "") for p in r.phases
             if p.phase_type != PhaseType.JUDGMENT and p.model_id == model and p.status == PhaseStatus.COMPLETE]
    j = r.judgment
    scores: dict[str, int | None] = {}
    reason = ""
    if j is not None:
        s = scores_in_view(j, team, effective=effective)
        scores = dict(s.as_dict())
        reason = j.team_a_justification if team == "a" else j.team_b_justification
    return Side(model, r, team, texts, scores, reason)


def dilemma_sides(rounds: Sequence[Round], a: str, b: str, *, effective: bool = False) -> list[DilemmaSides]:
    """For every dilemma on which both models had a judged round: one round of each, side by side (the round
    where they debated each other when there is one; else each model's first judged round there)."""
    judged = [r for r in rounds if r.judgment is not None]
    by_dilemma: dict[str, list[Round]] = {}
    for r in sorted(judged, key=lambda r: r.id):
        by_dilemma.setdefault(r.dilemma_id, []).append(r)
    out = []
    for d, rs in sorted(by_dilemma.items()):
        with_a = [r for r in rs if a in (r.team_a_model, r.team_b_model)]
        with_b = [r for r in rs if b in (r.team_a_model, r.team_b_model)]
        if not with_a or not with_b:
            continue
        met = [r for r in with_a if b in (r.team_a_model, r.team_b_model)]
        ra, rb = (met[0], met[0]) if met else (with_a[0], with_b[0])
        title = next((r.dilemma_title for r in rs if r.dilemma_title), d)
        out.append(DilemmaSides(d, title, _side(ra, a, effective), _side(rb, b, effective), bool(met)))
    return out
