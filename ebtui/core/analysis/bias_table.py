"""The bias fit's rows in numbers (`LongTable`: one row per judgment x team x criterion the judge scored) and
what is derived from them: whether the judge scores its own model or its family, and each team's length and
formatting relative to the other team's in the same judgment. Built from whole rounds here (`long_table`);
docs/STATISTICS.md, "Judge bias and reliability".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ebtui.core.analysis.frame import levels
from ebtui.core.analysis.style import Style, team_style
from ebtui.core.facts import exchange_key
from ebtui.core.facts import scores as scores_in_view
from ebtui.core.records import Judgment, Round, Team

#: (judge, exchange id) -> {"a": agrees?, "b": agrees?} (None: unknown); see ebtui.core.judge_views
AgreementMap = Mapping[tuple[str, str], Mapping[str, bool | None]]

WORDS_UNIT = "points per 100 words of the team's own text"
FORMAT_UNIT = "points per formatting element per 100 words"
RELATIVE_WORDS_UNIT = ("points per unit of (words - other team's words) / (words + other team's words), -1 to 1 "
                       "(+1/3: twice the other team's length)")
RELATIVE_FORMAT_UNIT = ("points per unit of (density - other team's density) / (density + other team's density), "
                        "-1 to 1, density in formatting elements per 100 words")
UNITS = {"length": WORDS_UNIT, "length_relative": RELATIVE_WORDS_UNIT, "format_density": FORMAT_UNIT,
         "format_relative": RELATIVE_FORMAT_UNIT}


def expand_judgments(rounds: Sequence[Round]) -> list[Round]:
    """Every judgment as a round of its own: a round with extra judgments becomes one round per judgment
    (id "<round id>#<judgment key>", judge and judgment set, same exchange id and transcript). Rounds without
    extra judgments are passed through unchanged (the same objects)."""
    out: list[Round] = []
    for r in rounds:
        if not r.extra_judgments:
            out.append(r)
            continue
        ex = exchange_key(r)
        if r.judgment is not None:
            out.append(r.model_copy(update={"exchange_id": ex, "extra_judgments": []}))
        for j in r.extra_judgments:
            out.append(r.model_copy(update={"id": f"{r.id}#{j.key}", "judgment": j, "exchange_id": ex,
                                            "judge_model": j.judge_model or r.judge_model,
                                            "blind_judge": j.blind, "extra_judgments": []}))
    return out


def judgment_counts(rounds: Sequence[Round]) -> dict[str, int]:
    """How many judgments the (unexpanded) rounds hold, by origin."""
    out = {"rounds": len(rounds), "judgments": 0, "rejudged": 0, "order_ba": 0}
    for r in rounds:
        js = r.all_judgments()
        out["judgments"] += len(js)
        out["rejudged"] += sum(1 for j in js if j.origin == "rejudge")
        out["order_ba"] += sum(1 for j in js if j.order == "ba")
    return out


def _scores(j: Judgment, team: Team, effective: bool) -> dict[str, int | None]:
    return scores_in_view(j, team, effective=effective).as_dict()


@dataclass
class LongTable:
    """The fit's rows in numbers."""

    y: np.ndarray
    model: np.ndarray
    judge: np.ndarray
    dilemma: np.ndarray
    crit: np.ndarray
    seat: np.ndarray  # +0.5 A, -0.5 B
    family: np.ndarray  # 1 same family
    first: np.ndarray  # +0.5 read first, -0.5 second
    words: np.ndarray  # per 100 words
    density: np.ndarray  # formatting elements per 100 words
    agree: np.ndarray  # 1, 0, nan unknown
    models: list[str]
    judges: list[str]
    dilemmas: list[str]
    criteria: list[str]
    judgments: int = 0
    rounds: int = 0
    without_judgment: int = 0  # rounds whose own judgment is missing (failed or incomplete)
    scores_missing: int = 0
    #: which judgment each row is of (an index, the same for both teams' rows of one judgment); empty: unknown
    judgment: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: the other team's length (per 100 words) and formatting density in the same judgment; empty: derived from
    #: `judgment` (the other seat's rows of the same judgment), NaN: the other team's text is unknown
    other_words: np.ndarray = field(default_factory=lambda: np.zeros(0))
    other_density: np.ndarray = field(default_factory=lambda: np.zeros(0))


def long_table(rounds: Sequence[Round], family_of: Callable[[str], str], *,
               agreement: AgreementMap | None = None, effective: bool = False) -> LongTable:
    """One row per (expanded) judgment x team x criterion the judge scored."""
    rows: list[tuple[float, str, str, str, str, float, float, float, float, float, float, int, float, float]] = []
    exp = expand_judgments(rounds)
    without = missing = judged = 0
    styles: dict[tuple[str, str], Style] = {}

    def style_of(r: Round, ex: str, team: Team) -> Style:
        if (ex, team) not in styles:
            styles[(ex, team)] = team_style(r, team)
        return styles[(ex, team)]

    for r in exp:
        j = r.judgment
        if j is None:
            continue
        judged += 1
        ex = exchange_key(r)
        first_team = "b" if j.order == "ba" else "a"
        seen = (agreement or {}).get((r.judge_model, ex), {})
        seats: tuple[tuple[Team, str], ...] = (("a", r.team_a_model), ("b", r.team_b_model))
        for team, model in seats:
            st = style_of(r, ex, team)
            other = style_of(r, ex, "b" if team == "a" else "a")
            ag = seen.get(team)
            same = family_of(model) == family_of(r.judge_model)
            for c, v in _scores(j, team, effective).items():
                if v is None:
                    missing += 1
                    continue
                rows.append((float(v), model, r.judge_model, r.dilemma_id, c, 0.5 if team == "a" else -0.5,
                             1.0 if same else 0.0, 0.5 if team == first_team else -0.5, st.words / 100.0,
                             st.per_100_words, np.nan if ag is None else float(bool(ag)), judged - 1,
                             other.words / 100.0, other.per_100_words))

    without = sum(1 for r in rounds if r.judgment is None)

    models, mi = levels([row[1] for row in rows])
    judges, ji = levels([row[2] for row in rows])
    dilemmas, di = levels([row[3] for row in rows])
    criteria, ci = levels([row[4] for row in rows])

    def num(col: int) -> np.ndarray:
        return np.array([row[col] for row in rows], dtype=float)

    return LongTable(num(0), mi, ji, di, ci, num(5), num(6), num(7), num(8), num(9), num(10), models, judges,
                     dilemmas, criteria, judgments=judged, rounds=len(rounds), without_judgment=without,
                     scores_missing=missing, judgment=np.array([row[11] for row in rows], dtype=np.int64),
                     other_words=num(12), other_density=num(13))


def self_rows(t: LongTable) -> np.ndarray:
    """Rows where the judge scores its own model's team (judge name = team model, `rejudge --allow-own`)."""
    if not len(t.y):
        return np.zeros(0, dtype=bool)
    as_model = {m: i for i, m in enumerate(t.models)}
    judge_model = np.array([as_model.get(j, -1) for j in t.judges], dtype=np.int64)  # the judge as a model (-1)
    out: np.ndarray = judge_model[t.judge] == t.model
    return out


def family_rows(t: LongTable) -> np.ndarray:
    """Rows where the judge scores a model of its own family that is not itself (self apart: `self_rows`)."""
    out: np.ndarray = (t.family > 0.5) & ~self_rows(t)
    return out


def _other(t: LongTable, own: np.ndarray, given: np.ndarray) -> np.ndarray | None:
    """The other team's value in the same judgment: `given` when the table carries it, else from the other
    seat's rows of the same judgment (NaN where the other team has no row); None: not in the data."""
    if len(given) == len(t.y):
        return given
    if len(t.judgment) != len(t.y) or not len(t.y):
        return None
    key = t.judgment.astype(np.int64) * 2 + (t.seat < 0)
    val = np.full(int(key.max()) + 2, np.nan)
    val[key] = own
    out: np.ndarray = val[key ^ 1]  # the same judgment, the other seat
    return out


def relative(own: np.ndarray, other: np.ndarray) -> np.ndarray:
    """(own - other) / (own + other), in -1..1 (0 where both are 0; NaN where the other is unknown)."""
    tot = own + other
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, (own - other) / np.where(tot > 0, tot, 1.0), np.where(np.isnan(tot), np.nan, 0.0))


def style_columns(t: LongTable, rows: np.ndarray | None = None) -> tuple[list[tuple[str, np.ndarray | None]], int]:
    """The style covariates, uncentred: own length and formatting, and each relative to the other team's in the
    same judgment (None: the other team's is not in the data); and how many rows lack the other team's.
    `rows`: of these rows only (e.g. one per unit)."""
    ow = _other(t, t.words, t.other_words)
    od = _other(t, t.density, t.other_density)
    words, density = t.words, t.density
    if rows is not None:
        words, density = words[rows], density[rows]
        ow = ow[rows] if ow is not None else None
        od = od[rows] if od is not None else None
    rl = relative(words, ow) if ow is not None else None
    rf = relative(density, od) if od is not None else None
    unknown = int(np.isnan(rl).sum()) if rl is not None else 0
    return [("length", words), ("length_relative", rl), ("format_density", density),
            ("format_relative", rf)], unknown
