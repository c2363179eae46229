"""What the design identifies, decided before any number is reported: whether a contrast of the joint fit
is estimable (it lies in the row space of the plain dummy-coded design matrix) and, when not, why in
words (models never linked through common judges, a seat or family term confounded with the rest).
Pure numpy. See docs/STATISTICS.md, "What the design identifies".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ebtui.core.analysis.common import int_unique
from ebtui.core.analysis.frame import ScoreFrame

TOL = 1e-9  # eigenvalues below TOL * largest are the null space
MIN_DILEMMAS = 3  # an interval needs this many dilemmas behind the quantity (see docs/STATISTICS.md)


def null_space(xtx: np.ndarray) -> np.ndarray:
    """Columns spanning the null space of a symmetric positive semi-definite X'X."""
    if xtx.size == 0:
        return np.zeros((0, 0))
    w, v = np.linalg.eigh(xtx)
    top = float(max(w.max(), 0.0))
    return v[:, w <= TOL * max(top, 1.0)]


def is_estimable(null: np.ndarray, c: np.ndarray) -> bool:
    """c'β is estimable iff c is orthogonal to the null space of X (i.e. c is in the row space of X)."""
    if null.shape[1] == 0:
        return True
    norm = float(np.linalg.norm(c))
    return norm == 0.0 or float(np.linalg.norm(null.T @ c)) <= 1e-6 * norm


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def components(model_idx: np.ndarray, judge_idx: np.ndarray, n_models: int, n_judges: int) -> list[int]:
    """Per model, the id of its connected part of the bipartite model–judge graph (an edge: the judge scored
    the model at least once)."""
    uf = _UnionFind(n_models + n_judges)
    for m, j in set(zip(model_idx.tolist(), judge_idx.tolist(), strict=True)):
        uf.union(m, n_models + j)
    return [uf.find(m) for m in range(n_models)]


def judge_components(model_idx: np.ndarray, judge_idx: np.ndarray, n_models: int, n_judges: int) -> list[int]:
    uf = _UnionFind(n_models + n_judges)
    for m, j in set(zip(model_idx.tolist(), judge_idx.tolist(), strict=True)):
        uf.union(m, n_models + j)
    return [uf.find(n_models + j) for j in range(n_judges)]


@dataclass
class Layout:
    """Column positions of the dummy-coded design: models, judges, seat, family, criteria[, intercept,
    dilemmas]."""

    M: int
    J: int
    C: int
    G: int
    seat: bool
    family: bool
    with_dilemmas: bool = True

    @property
    def judge0(self) -> int:
        return self.M

    @property
    def seat_col(self) -> int:
        return self.M + self.J

    @property
    def family_col(self) -> int:
        return self.M + self.J + int(self.seat)

    @property
    def crit0(self) -> int:
        return self.M + self.J + int(self.seat) + int(self.family)

    @property
    def intercept_col(self) -> int:
        return self.crit0 + self.C

    @property
    def dil0(self) -> int:
        return self.intercept_col + 1

    @property
    def width(self) -> int:
        return self.crit0 + self.C + ((1 + self.G) if self.with_dilemmas else 0)

    def unit(self, col: int) -> np.ndarray:
        """The contrast that picks one column's coefficient."""
        c = np.zeros(self.width)
        c[col] = 1.0
        return c

    def deviation(self, start: int, k: int, i: int) -> np.ndarray:
        """The contrast of level i of the k-level block at column `start` against the block's average."""
        c = np.zeros(self.width)
        c[start:start + k] = -1.0 / k
        c[start + i] += 1.0
        return c


def design_entries(model_idx: np.ndarray, judge_idx: np.ndarray, crit_idx: np.ndarray, dilemma_idx: np.ndarray,
                   seat: np.ndarray, family: np.ndarray, lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """The over-parameterised design matrix in sparse form: per row, the columns it touches and their values
    (rows x k each; every block has exactly one entry per row)."""
    n = len(model_idx)
    cols = [model_idx, lay.judge0 + judge_idx, lay.crit0 + crit_idx]
    vals = [np.ones(n), np.ones(n), np.ones(n)]
    if lay.seat:
        cols.append(np.full(n, lay.seat_col))
        vals.append(np.asarray(seat, float))
    if lay.family:
        cols.append(np.full(n, lay.family_col))
        vals.append(np.asarray(family, float))
    if lay.with_dilemmas:
        cols += [np.full(n, lay.intercept_col), lay.dil0 + dilemma_idx]
        vals += [np.ones(n), np.ones(n)]
    return np.stack(cols, axis=1).astype(np.int64), np.stack(vals, axis=1)


def gram(cols: np.ndarray, vals: np.ndarray, width: int, groups: np.ndarray | None = None,
         n_groups: int = 1) -> np.ndarray:
    """X'X (per group of rows when `groups` is given: n_groups x width x width) from `design_entries`, by
    counting: each row adds vals[a] * vals[b] at (cols[a], cols[b])."""
    n, k = cols.shape
    flat = (cols[:, :, None] * width + cols[:, None, :]).reshape(n, k * k)
    w = (vals[:, :, None] * vals[:, None, :]).reshape(n, k * k)
    if groups is not None:
        flat = flat + (np.asarray(groups, np.int64) * width * width)[:, None]
    out = np.bincount(flat.ravel(), weights=w.ravel(), minlength=n_groups * width * width)
    return out.reshape(n_groups, width, width)


@dataclass
class Identification:
    """What the design identifies (one per fitted design)."""

    models: list[str]
    judges: list[str]
    layout: Layout
    null: np.ndarray
    model_part: list[int]  # per model: its part of the model–judge graph
    judge_part: list[int]
    has_seat: bool
    has_family: bool
    notes: list[str] = field(default_factory=list)  # terms dropped, with their true cause

    # ---- contrasts ------------------------------------------------------------------------------------

    def pair_vector(self, a: int, b: int) -> np.ndarray:
        c = np.zeros(self.layout.width)
        c[a] += 1.0
        c[b] -= 1.0
        return c

    def pair_reason(self, a: int, b: int) -> str:
        """Why skill[a] - skill[b] is not identified ('' when it is)."""
        if is_estimable(self.null, self.pair_vector(a, b)):
            return ""
        ma, mb = self.models[a], self.models[b]
        if self.model_part[a] != self.model_part[b]:
            return (f"{ma} and {mb} were never scored by a common judge (nor linked through a chain of judges "
                    "who scored common models)")
        return (f"the difference between {ma} and {mb} cannot be told apart from the seat, same-family or "
                "dilemma terms in this design")

    def adjusted_vector(self, m: int) -> np.ndarray:
        """The adjusted mean of model m: intercept + skill + the average judge, criterion and dilemma."""
        lay = self.layout
        c = np.zeros(lay.width)
        c[m] = 1.0
        c[lay.judge0:lay.judge0 + lay.J] = 1.0 / lay.J
        c[lay.crit0:lay.crit0 + lay.C] = 1.0 / lay.C
        if lay.with_dilemmas:
            c[lay.intercept_col] = 1.0
            c[lay.dil0:lay.dil0 + lay.G] = 1.0 / lay.G
        return c

    def _level_reason(self, vector: np.ndarray, names: list[str], part: list[int], i: int,
                      apart: Callable[[list[str]], str]) -> str:
        """'' when the contrast `vector` of level i is identified; else `apart(the levels in other parts of
        the model–judge graph)`, or, with none, the other terms it is confounded with."""
        if is_estimable(self.null, vector):
            return ""
        others = [names[k] for k in range(len(names)) if part[k] != part[i]]
        if others:
            return apart(others)
        return "not identified: confounded with the seat, same-family or dilemma terms in this design"

    def adjusted_reason(self, m: int) -> str:
        return self._level_reason(
            self.adjusted_vector(m), self.models, self.model_part, m,
            lambda others: (f"not comparable with {_names(others)}: {self.models[m]} was never scored by a judge "
                            "who also scored them, so the average judge is not identified (only differences "
                            f"within {{{_names(self.part_members(m))}}} are; see pairwise)"))

    def part_members(self, m: int) -> list[str]:
        return [self.models[k] for k in range(len(self.models)) if self.model_part[k] == self.model_part[m]]

    def offset_vector(self, j: int) -> np.ndarray:
        return self.layout.deviation(self.layout.judge0, self.layout.J, j)

    def offset_reason(self, j: int) -> str:
        return self._level_reason(
            self.offset_vector(j), self.judges, self.judge_part, j,
            lambda others: (f"not identified: {self.judges[j]} never scored a model that {_names(others)} also "
                            "scored, so its severity cannot be told apart from the skill of the models it scored"))

    def dilemma_reason(self, g: int, dilemmas: Sequence[str]) -> str:
        """Why dilemma g's difficulty (its offset from the average dilemma) is not identified ('' when it is)."""
        lay = self.layout
        if not lay.with_dilemmas or lay.G < 2:
            return ""
        if is_estimable(self.null, lay.deviation(lay.dil0, lay.G, g)):
            return ""
        return (f"not identified: the models and judges on {dilemmas[g]} never met those on some other dilemmas, "
                "so its difficulty cannot be told apart from their skill and severity")

    @property
    def connected(self) -> bool:
        return len(set(self.model_part)) <= 1


def _names(xs: Sequence[str]) -> str:
    xs = list(xs)
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def identify(model_idx: np.ndarray, judge_idx: np.ndarray, crit_idx: np.ndarray, dilemma_idx: np.ndarray,
             seat: np.ndarray, family: np.ndarray, models: Sequence[str], judges: Sequence[str], n_criteria: int,
             n_dilemmas: int, *, has_seat: bool, has_family: bool) -> Identification:
    """Decide the design's terms and what it identifies. `has_seat`/`has_family`: whether the data have any
    seat / family contrast at all; a term is then dropped only when its own coefficient is not estimable,
    with the true cause in `notes`."""
    M, J = len(models), len(judges)
    notes: list[str] = []

    def nullspace(seat_on: bool, fam_on: bool) -> tuple[Layout, np.ndarray]:
        lay = Layout(M, J, n_criteria, n_dilemmas, seat_on, fam_on)
        cols, vals = design_entries(model_idx, judge_idx, crit_idx, dilemma_idx, seat, family, lay)
        return lay, null_space(gram(cols, vals, lay.width)[0])

    lay, null = nullspace(has_seat, has_family)
    if has_family:
        if not is_estimable(null, lay.unit(lay.family_col)):
            has_family = False
            notes.append("same-family preference not estimable: the same-family scores cannot be told apart from "
                         "the models and judges that gave and received them (every judge of a model's own family "
                         "scored only models of that family, or the like): left out of the fit")
            lay, null = nullspace(has_seat, has_family)
    if has_seat:
        if not is_estimable(null, lay.unit(lay.seat_col)):
            has_seat = False
            per_model: dict[int, set[float]] = {int(m): set() for m in set(model_idx.tolist())}
            for m, s in zip(model_idx.tolist(), seat.tolist(), strict=True):
                per_model[int(m)].add(s)
            cause = ("every model always sat in the same seat (Team A or Team B), so the seat cannot be told "
                     "apart from the models" if all(len(v) == 1 for v in per_model.values()) else
                     "the seat cannot be told apart from the models, judges and dilemmas in this design")
            notes.append(f"seat effect not estimable: {cause}: left out of the fit")
            lay, null = nullspace(has_seat, has_family)
    parts = components(model_idx, judge_idx, M, J)
    jparts = judge_components(model_idx, judge_idx, M, J)
    ident = Identification(list(models), list(judges), lay, null, parts, jparts, has_seat, has_family, notes)
    if not ident.connected:
        groups: dict[int, list[str]] = {}
        for k, p in enumerate(parts):
            groups.setdefault(p, []).append(models[k])
        listed = "; ".join("{" + ", ".join(g) + "}" for g in groups.values())
        notes.append(f"the models fall into {len(groups)} groups never scored by a common judge ({listed}): "
                     "adjusted means, judge offsets and comparisons across groups are not identified and are "
                     "left blank; differences within a group are reported")
    return ident


def cell_keys(model_idx: np.ndarray, judge_idx: np.ndarray, crit_idx: np.ndarray, dilemma_idx: np.ndarray,
              seat: np.ndarray, family: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct design cells (model, judge, criterion, dilemma, seat, family) of the rows: the first row of
    each cell, and each row's cell number."""
    cols = [np.asarray(x, np.int64) for x in (model_idx, judge_idx, crit_idx, dilemma_idx)]
    cols += [(np.asarray(seat, float) > 0).astype(np.int64), (np.asarray(family, float) > 0).astype(np.int64)]
    key = np.zeros(len(cols[0]), np.int64)
    for c in cols:
        key = key * (int(c.max()) + 1 if c.size else 1) + c
    _, first, inverse = int_unique(key)  # (np.unique's arrays, without the sort)
    return first, inverse


def distinct_cells(model_idx: np.ndarray, judge_idx: np.ndarray, crit_idx: np.ndarray, dilemma_idx: np.ndarray,
                   seat: np.ndarray, family: np.ndarray) -> tuple[np.ndarray, ...]:
    """The rows of the design with each distinct cell once (see cell_keys)."""
    first, _ = cell_keys(model_idx, judge_idx, crit_idx, dilemma_idx, seat, family)
    return tuple(np.asarray(x)[first] for x in (model_idx, judge_idx, crit_idx, dilemma_idx, seat, family))


def identify_design(f: ScoreFrame, *, has_seat: bool | None = None,
                    has_family: bool | None = None) -> Identification:
    """`identify` for the long table a joint fit reads."""
    seat_any = bool(f.seat.size) and bool(f.seat.min() != f.seat.max())
    fam_any = bool(0 < f.family.sum() < len(f.family))
    # what is identified depends on which rows of the design occur, not how often: one row per distinct cell
    mi, ji, ci, di, seat, fam = distinct_cells(f.model_idx, f.judge_idx, f.crit_idx, f.dilemma_idx, f.seat, f.family)
    return identify(mi, ji, ci, di, seat, fam, f.models, f.judges, len(f.criteria), len(f.dilemmas),
                    has_seat=seat_any if has_seat is None else has_seat,
                    has_family=fam_any if has_family is None else has_family)


def dilemmas_per_level(idx: np.ndarray, dilemma_idx: np.ndarray, k: int) -> list[int]:
    """For levels 0..k-1 of a factor: on how many distinct dilemmas each was observed."""
    pairs = int_unique(np.asarray(idx, np.int64) * (int(np.max(dilemma_idx, initial=0)) + 1)
                       + np.asarray(dilemma_idx, np.int64))[0]
    levels = pairs // (int(np.max(dilemma_idx, initial=0)) + 1)
    counts: list[int] = np.bincount(levels, minlength=k).astype(int).tolist()
    return counts[:k]


def sparse_reason(what: str, n_dilemmas: int) -> str:
    """The blank-interval reason for a quantity resting on fewer than MIN_DILEMMAS dilemmas ('' otherwise)."""
    if n_dilemmas >= MIN_DILEMMAS:
        return ""
    return (f"{what} rests on {n_dilemmas} dilemma{'s' if n_dilemmas != 1 else ''}; an interval needs at least "
            f"{MIN_DILEMMAS} (the variation between dilemmas cannot be estimated from fewer)")
