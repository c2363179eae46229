"""The bias fit's rows in numbers (`LongTable`: one row per judgment x team x criterion the judge scored; from
whole rounds: `long_table`), what is derived from them (self and same-family rows, each team's length and
formatting relative to the other's), and the fit's design: its terms per unit (`build_terms`) and its sums
per dilemma (`dilemma_sums`). docs/STATISTICS.md, "Judge bias and reliability".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ebtui.core.analysis.fit import sum_matrix
from ebtui.core.analysis.frame import levels
from ebtui.core.analysis.judge_model import DilemmaSums
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


# ---- the fit's design: its terms per unit, and its sums per dilemma ---------------------------------------


@dataclass
class Terms:
    """The fixed columns (everything but the dilemma block) by name. Every column but the criterion's is the same
    for all rows of a unit (one team in one judgment): `A` holds them once per unit (they are the columns
    `ucols` of `names`; `unit`: each row's unit, `first`: a row of each unit); the criterion's sum codes
    (columns `crit_cols`) vary within a unit."""

    names: list[str]
    model_cols: slice
    notes: list[str] = field(default_factory=list)
    order_judges: list[str] = field(default_factory=list)
    agree_judges: list[str] = field(default_factory=list)
    #: terms left out because the others already explain them (see _separable)
    dropped: list[str] = field(default_factory=list)
    #: the sum-coded factors ("model", "judge", "criterion"): name -> their columns (one fewer than the levels)
    factors: dict[str, list[int]] = field(default_factory=dict)
    A: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    ucols: list[int] = field(default_factory=list)
    crit_cols: list[int] = field(default_factory=list)
    unit: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    first: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def col(self, name: str) -> int | None:
        return self.names.index(name) if name in self.names else None


def _units(t: LongTable) -> tuple[np.ndarray, np.ndarray]:
    """Each row's unit (one team in one judgment) and a row of each unit, the units numbered by dilemma and
    (judge, model) pair (dilemma_sums reads them in that order); every row its own unit when the table does
    not say which judgment a row is of."""
    if len(t.judgment) != len(t.y):
        unit, first = np.arange(len(t.y)), np.arange(len(t.y))
    else:
        key = t.judgment.astype(np.int64) * 2 + (t.seat < 0)
        new = key[1:] != key[:-1]
        if bool(np.all(key[1:] >= key[:-1])):  # rows judgment by judgment, as both builders give them
            first = np.flatnonzero(np.r_[True, new])
            unit = np.r_[0, np.cumsum(new)]
        else:
            _, first, unit = np.unique(key, return_index=True, return_inverse=True)
            unit = unit.reshape(-1)
        del key, new
    o = np.argsort(_cell_key(t, first), kind="stable")
    rank = np.empty_like(o)
    rank[o] = np.arange(len(o))
    return rank[unit], first[o]


def _cell_key(t: LongTable, rows: np.ndarray) -> np.ndarray:
    """The rows' (dilemma, judge, model) cell as one number."""
    J, M = max(len(t.judges), 1), max(len(t.models), 1)
    out: np.ndarray = (t.dilemma[rows].astype(np.int64) * J + t.judge[rows]) * M + t.model[rows]
    return out


def _sum_code_units(idx: np.ndarray, k: int) -> np.ndarray:
    return sum_matrix(k)[idx] if k > 1 else np.zeros((len(idx), 0))


def build_terms(t: LongTable, *, style: bool = True, order: bool = True, agreement: bool = True) -> Terms:
    unit, first = _units(t)
    cols: list[np.ndarray] = [np.ones(len(first))]  # per unit
    names = ["mu"]
    ucols = [0]
    M = len(t.models)
    mc = _sum_code_units(t.model[first], M)
    cols += [mc[:, k] for k in range(mc.shape[1])]
    names += [f"model:{m}" for m in t.models[:-1]]
    ucols += list(range(1, 1 + mc.shape[1]))
    model_cols = slice(1, 1 + max(M - 1, 0))
    notes: list[str] = []
    factors = {"model": list(range(model_cols.start, model_cols.stop))}

    def add(name: str, col: np.ndarray) -> None:  # a per-unit column
        ucols.append(len(names))
        cols.append(col)
        names.append(name)

    seat = t.seat[first]
    if len(np.unique(seat)) == 2:
        add("seat", seat)
    jc = _sum_code_units(t.judge[first], len(t.judges))
    factors["judge"] = list(range(len(names), len(names) + jc.shape[1]))
    for k in range(jc.shape[1]):
        add(f"judge:{t.judges[k]}", jc[:, k])
    for name, rows in (("self", self_rows(t)), ("family", family_rows(t))):
        if 0 < rows.sum() < len(rows):
            add(name, rows[first].astype(float))
    crit_cols = list(range(len(names), len(names) + max(len(t.criteria) - 1, 0)))
    factors["criterion"] = crit_cols
    names += [f"criterion:{c}" for c in t.criteria[:-1]]
    if style:  # per unit (a unit's rows share its style), centred over the rows
        n_u = np.bincount(unit, minlength=len(first)).astype(float)
        covariates, _ = style_columns(t, rows=first)
        rl = dict(covariates)["length_relative"]
        unknown = int(n_u[np.isnan(rl)].sum()) if rl is not None else 0
        if unknown:
            notes.append(f"{unknown} scores: the other team's text is not in the data, its relative length and "
                         "formatting taken as equal to this team's (0)")
        for name, v in covariates:
            if v is None:
                notes.append(f"{name}: the other team's text is not in the data, not estimable")
                continue
            v = np.nan_to_num(v, nan=0.0)
            if len(v) and np.ptp(v) > 1e-9:
                add(name, v - (n_u @ v) / n_u.sum())
            else:
                notes.append(f"{name}: no variation across the teams' texts, not estimable")
    order_judges: list[str] = []
    agree_judges: list[str] = []
    ujudge, ufirst, uagree = t.judge[first], t.first[first], t.agree[first]
    useat = t.seat[first]
    for j, name in enumerate(t.judges):
        mine = ujudge == j
        if order:
            # both orders: Team A's seat read first in some judgments and second in others
            if len(np.unique(ufirst[mine & (useat > 0)])) == 2:
                add(f"order:{name}", np.where(mine, ufirst, 0.0))
                order_judges.append(name)
        if agreement:
            known = mine & np.isfinite(uagree)
            if set(np.unique(uagree[known]).tolist()) == {0.0, 1.0}:
                add(f"agree:{name}", np.where(known, uagree, 0.0))
                agree_judges.append(name)
                unknown = mine & ~np.isfinite(uagree)
                if unknown.any():
                    add(f"agree_unknown:{name}", unknown.astype(float))
    A = np.column_stack(cols) if cols else np.zeros((len(first), 0))
    return Terms(names, model_cols, notes, order_judges, agree_judges, factors=factors, A=A, ucols=ucols,
                 crit_cols=crit_cols, unit=unit, first=first)


def dilemma_sums(t: LongTable, terms: Terms) -> DilemmaSums:
    """The fit's sufficient statistics per dilemma (and per dilemma x (judge, model) pair), from the units: a
    row's fixed columns are its unit's (terms.A) and its criterion's sum code, so every sum over rows is a
    weighted sum over units — no row-level design matrix. Centred within each dilemma (the dilemma's own
    difficulty term absorbs its mean). The units come numbered by dilemma and pair (_units)."""
    U, C, k = len(terms.first), len(t.criteria), len(terms.names)
    G = len(t.dilemmas)
    ua, uc = terms.ucols, terms.crit_cols
    cell_code = terms.unit * C + t.crit
    cnt = np.bincount(cell_code, minlength=U * C).reshape(U, C).astype(float)  # rows per unit and criterion
    ycrit = np.bincount(cell_code, weights=t.y, minlength=U * C).reshape(U, C)
    del cell_code
    n_u, y_u = cnt.sum(axis=1), ycrit.sum(axis=1)
    Tc = sum_matrix(C)  # criterion level -> its sum code
    key = _cell_key(t, terms.first)
    J, M = max(len(t.judges), 1), max(len(t.models), 1)
    ug = key // (J * M)
    A = terms.A
    g_start = np.flatnonzero(np.r_[True, ug[1:] != ug[:-1]]) if U else np.zeros(0, dtype=np.int64)
    c_start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if U else np.zeros(0, dtype=np.int64)
    n = np.add.reduceat(n_u, g_start)
    ys = np.add.reduceat(y_u, g_start)
    ybar = ys / n
    csum = np.add.reduceat(cnt, g_start, axis=0)  # rows per dilemma and criterion
    cbar = csum @ Tc / n[:, None]
    abar = np.zeros((G, len(ua)))
    cells_a = np.zeros((len(c_start), len(ua)))  # per (dilemma, pair) cell: its centred unit columns' sum
    Acc = np.zeros((G, k, k))
    b = np.zeros((G, k))
    ends = np.r_[g_start[1:], U]
    for g, (s, e) in enumerate(zip(g_start.tolist(), ends.tolist(), strict=True)):
        w = n_u[s:e]
        abar[g] = w @ A[s:e] / n[g]
        a = A[s:e] - abar[g]  # centred within the dilemma
        aw = a * w[:, None]
        cs, ce = np.searchsorted(c_start, [s, e])
        cells_a[cs:ce] = np.add.reduceat(aw, c_start[cs:ce] - s, axis=0)
        ac = a.T @ cnt[s:e] @ Tc
        Acc[g][np.ix_(ua, ua)] = a.T @ aw
        Acc[g][np.ix_(ua, uc)] = ac
        Acc[g][np.ix_(uc, ua)] = ac.T
        Acc[g][np.ix_(uc, uc)] = Tc.T @ (Tc * csum[g][:, None]) - n[g] * np.outer(cbar[g], cbar[g])
        b[g, ua] = a.T @ y_u[s:e]
        b[g, uc] = ycrit[s:e].sum(axis=0) @ Tc - cbar[g] * ys[g]
    xbar = np.zeros((G, k))
    xbar[:, ua], xbar[:, uc] = abar, cbar
    # each raw column's sum of squares over the rows (the redundancy check's scale)
    raw = np.zeros(k)
    raw[ua] = np.einsum("gii->i", Acc[:, ua][:, :, ua]) + n @ (abar * abar)
    raw[uc] = csum.sum(axis=0) @ (Tc * Tc)
    # the (dilemma, pair) cells, centred like the rest
    cg = ug[c_start]
    pairs, cc = np.unique(key[c_start] % (J * M), return_inverse=True)
    cn = np.add.reduceat(n_u, c_start)
    cy = np.add.reduceat(y_u, c_start) - cn * ybar[cg]
    cx = np.zeros((len(c_start), k))
    cx[:, ua] = cells_a
    cx[:, uc] = np.add.reduceat(cnt, c_start, axis=0) @ Tc - cn[:, None] * cbar[cg]
    return DilemmaSums(n, xbar, ybar, Acc, b, raw, cg, cc.reshape(-1), cn, cy, cx, len(pairs))
