"""The report's descriptive tables, computed from the per-round columns (ebtui.core.analysis.frame.Facts) in
time that grows with the number of rounds through numpy group-bys, never through a transcript. The one
computation of these tables: ebtui.core.analysis.tables gives them for a list of rounds through the same code.

Conventions are those of ebtui.core.analysis.common (one observation per exchange, missing is missing,
dilemma-cluster intervals).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from ebtui.core.analysis.agreement import icc_2_1, krippendorff_interval, pearson, spearman
from ebtui.core.analysis.bootstrap import SCALE, cluster_mean
from ebtui.core.analysis.common import (
    OVERALL,
    ROLES,
    SEATS,
    VIEW_BOTH,
    Cell,
    Coverage,
    Table,
    distinct_ints,
    int_unique,
    view_name,
)
from ebtui.core.analysis.consistency_rules import ConsistencyClassification
from ebtui.core.analysis.frame import NC, SLOTS, Facts, levels
from ebtui.core.frameworks import CONSISTENCY_CLASSES, CONSISTENCY_LABELS, FRAMEWORKS
from ebtui.core.records import CRITERIA

PHASES = ("presentation", "response", "rebuttal", "consistency_test")
PHASE_TEAM = {"presentation": 0, "response": 1, "rebuttal": 0, "consistency_test": 0}
#: framework usage's phase for the judges' remarks about a team
JUDGE_REMARKS = "judge_remarks"
CONS = CRITERIA.index("consistency")


def coverage(facts: Facts, effective: bool) -> Coverage:
    s = facts.scores(effective)[facts.judged]
    missing = (s == 0).sum(axis=(1, 2))
    return Coverage(rounds=len(facts), rounds_without_judgment=int((~facts.judged).sum()),
                    rounds_without_any_score=int((missing == 2 * NC).sum()), scores_expected=int(2 * NC * len(s)),
                    scores_missing=int(missing.sum()))


@dataclass
class Exchanges:
    """The rounds grouped by exchange (sorted by exchange id): a panel's criterion means per team."""

    facts: Facts
    keys: list[str]
    of_round: np.ndarray  # exchange index of each round
    first: np.ndarray  # each exchange's first round (input order)
    _means: dict[bool, np.ndarray]

    @classmethod
    def of(cls, facts: Facts) -> Exchanges:
        keys, inv = facts.codes("exchange")
        first = np.full(len(keys), len(facts), dtype=np.int64)
        np.minimum.at(first, inv, np.arange(len(facts)))
        return cls(facts, keys, inv, first, {})

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def dilemma(self) -> np.ndarray:
        out: np.ndarray = self.facts.dilemma[self.first]
        return out

    def dilemma_codes(self) -> np.ndarray:
        """Each exchange's dilemma as an integer, numbered in the dilemma ids' sorted order."""
        out: np.ndarray = self.facts.codes("dilemma")[1][self.first]
        return out

    def model(self, team: int) -> np.ndarray:
        out: np.ndarray = (self.facts.team_a if team == 0 else self.facts.team_b)[self.first]
        return out

    def titles(self) -> list[str]:
        """Each exchange's dilemma title: the first non-empty one among its rounds."""
        out = [""] * len(self.keys)
        seen = [False] * len(self.keys)
        for e, t in zip(self.of_round.tolist(), self.facts.title.tolist(), strict=True):
            if t and not seen[e]:
                out[e], seen[e] = t, True
        return out

    def criterion_means(self, effective: bool) -> np.ndarray:
        """[E, 2, 7]: per exchange, team and criterion the mean of the panel's scores (NaN: none given)."""
        if effective not in self._means:
            s = self.facts.scores(effective).astype(float)
            judged = self.facts.judged
            E = len(self.keys)
            sums = np.zeros((E, 2, NC))
            counts = np.zeros((E, 2, NC))
            np.add.at(sums, self.of_round[judged], s[judged])
            np.add.at(counts, self.of_round[judged], (s[judged] > 0).astype(float))
            with np.errstate(invalid="ignore", divide="ignore"):
                self._means[effective] = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)
        return self._means[effective]

    def overall(self, effective: bool) -> np.ndarray:
        """[E, 2]: the mean of each team's available criterion means (NaN: none)."""
        m = self.criterion_means(effective)
        n = np.sum(~np.isnan(m), axis=2)
        out = np.full(n.shape, np.nan)
        has = n > 0
        out[has] = np.nansum(m, axis=2)[has] / n[has]
        # statistics.fmean (correctly rounded) where a panel's means are not multiples of 1/64 (thirds, ...):
        # a sum of up to 7 multiples of 1/64 on the 1-10 scale is exact, so it is fmean's already
        frac = has & np.any(~np.isnan(m) & (m * 64 != np.round(m * 64)), axis=2)
        for e, t in zip(*np.nonzero(frac), strict=True):
            out[e, t] = statistics.fmean(v for v in m[e, t].tolist() if not math.isnan(v))
        return out

    def text_round(self, phase: str) -> np.ndarray:
        """Per exchange, the round whose answer for `phase` the exchange shows (the one that ran the phase
        itself before one that copied it; -1: no completed answer)."""
        k = PHASES.index(phase)
        has = self.facts.text_len[:, k] >= 0
        reused = self.facts.reused[:, k]
        E = len(self.keys)
        best = np.full(E, -1, dtype=np.int64)
        rows = np.arange(len(self.facts))
        for pick in (has & ~reused, has & reused):  # first (input order) that ran it, else first that copied it
            first = np.full(E, len(self.facts), dtype=np.int64)
            np.minimum.at(first, self.of_round[pick], rows[pick])
            fill = (best < 0) & (first < len(self.facts))
            best[fill] = first[fill]
        return best


# ---- raw means (ebtui.core.views.means) ----------------------------------------------------------------


@dataclass(frozen=True)
class RawMean:
    model: str
    mean: float | None
    n_scores: int
    n_rounds: int
    n_exchanges: int
    n_dilemmas: int


def model_means(facts: Facts, *, effective: bool) -> dict[str, RawMean]:
    s = facts.scores(effective)
    names, seat_code = facts.codes("seat_model")
    R, M = len(facts), len(names)
    tot = np.zeros(M)
    cnt = np.zeros(M, dtype=np.int64)
    ex = facts.codes("exchange")[1]
    di = facts.codes("dilemma")[1]
    keys: dict[str, list[np.ndarray]] = {"r": [], "x": [], "d": []}
    for team in (0, 1):
        mi = seat_code[team * R:(team + 1) * R]
        given = (s[:, team] > 0).sum(axis=1)
        np.add.at(tot, mi, s[:, team].sum(axis=1).astype(float))
        np.add.at(cnt, mi, given)
        rows = np.flatnonzero(given > 0)
        for k, col in (("r", rows), ("x", ex[rows]), ("d", di[rows])):
            keys[k].append(mi[rows] * (R + 1) + col)
    # distinct rounds, exchanges and dilemmas per model (a self-debate's round counts once)
    n = {k: np.bincount(distinct_ints(np.concatenate(v)) // (R + 1), minlength=M) if R else np.zeros(M, dtype=np.int64)
         for k, v in keys.items()}
    return {m: RawMean(m, float(tot[i]) / int(cnt[i]) if cnt[i] else None, int(cnt[i]), int(n["r"][i]),
                       int(n["x"][i]), int(n["d"][i])) for i, m in enumerate(names)}


def model_criterion_means(facts: Facts, *, effective: bool) -> dict[tuple[str, str], tuple[float | None, int]]:
    s = facts.scores(effective)
    names, seat_code = facts.codes("seat_model")
    R = len(facts)
    tot = np.zeros((len(names), NC))
    cnt = np.zeros((len(names), NC), dtype=np.int64)
    for team in (0, 1):
        mi = seat_code[team * R:(team + 1) * R]
        np.add.at(tot, mi, s[:, team].astype(float))
        np.add.at(cnt, mi, (s[:, team] > 0).astype(np.int64))
    return {(m, c): ((float(tot[i, k]) / int(cnt[i, k])) if cnt[i, k] else None, int(cnt[i, k]))
            for i, m in enumerate(names) for k, c in enumerate(CRITERIA)}


# ---- the descriptive tables ----------------------------------------------------------------------------


def model_comparison(facts: Facts, ex: Exchanges, *, effective: bool = True) -> Table:
    means = ex.criterion_means(effective)
    overall = ex.overall(effective)
    dil = ex.dilemma_codes()
    rows: list[list[Cell]] = []
    models_of = [ex.model(0), ex.model(1)]
    for model in facts.models():
        for t, team in enumerate(SEATS):
            mine = models_of[t] == model
            for k, c in enumerate((*CRITERIA, OVERALL)):
                vals = overall[:, t] if c == OVERALL else means[:, t, k]
                sel = mine & ~np.isnan(vals)
                n = int(sel.sum())
                if not n and c == OVERALL:
                    continue
                mean, iv = cluster_mean(vals[sel], dil[sel], clip=SCALE)
                rows.append([model, ROLES[team], c, n, mean, iv.low, iv.high, iv.note if n else ""])
    return Table(
        "model_comparison", "Model comparison: raw mean score per criterion by role",
        ["model", "role", "criterion", "n", "mean", "ci95_low", "ci95_high", "interval_note"], rows,
        view=view_name(effective), coverage=coverage(facts, effective),
        notes=["n counts exchanges (a judge panel's scores for one answer are averaged first). Raw means: not "
               "adjusted for the judges (see the models table for that).",
               f"{OVERALL}: per exchange, the mean of the criteria the judges gave."])


def dilemma_difficulty(facts: Facts, ex: Exchanges, *, effective: bool = True) -> Table:
    overall = ex.overall(effective)
    dil = ex.dilemma.tolist()
    titles: dict[str, str] = {}
    n_ex: dict[str, int] = defaultdict(int)
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    a_models, b_models = ex.model(0).tolist(), ex.model(1).tolist()
    for e, (d, title) in enumerate(zip(dil, ex.titles(), strict=True)):
        titles.setdefault(d, title)
        n_ex[d] += 1
        for t, m in ((0, a_models[e]), (1, b_models[e])):
            v = overall[e, t]
            if not math.isnan(v):
                per[d][m].append(float(v))
    rows: list[list[Cell]] = []
    for d in sorted(set(titles)):
        model_means = {m: float(np.mean(vs)) for m, vs in per.get(d, {}).items() if vs}
        mean = spread = sd = None
        low = high = None
        if model_means:
            arr = np.array(list(model_means.values()))
            mean = float(np.mean(arr))
            spread = float(np.max(arr) - np.min(arr))
            sd = float(np.std(arr, ddof=1)) if len(arr) >= 2 else None
            low = min(model_means, key=lambda m: (model_means[m], m))
            high = max(model_means, key=lambda m: (model_means[m], m))
        rows.append([d, titles[d], n_ex[d], len(model_means), mean, spread, sd, low, high, None, ""])
    ranked = sorted((r for r in rows if r[4] is not None), key=lambda r: (r[4], r[0]))
    for i, r in enumerate(ranked, 1):
        r[9] = i
    if len(ranked) >= 2:
        ranked[0][10] = "hardest"
        ranked[-1][10] = "easiest"
    return Table(
        "dilemma_difficulty", "Dilemma difficulty",
        ["dilemma", "title", "exchanges", "models", "mean", "spread", "sd", "lowest_model", "highest_model",
         "rank", "verdict"], rows, view=view_name(effective), coverage=coverage(facts, effective),
        text_columns=frozenset({"title"}),
        notes=["A model's mean on a dilemma is the mean of its overall scores there (both roles); the dilemma's "
               "mean is the mean of its model means (each model weighs the same); spread = highest - lowest "
               "model mean; sd = sample sd of the model means. Rank 1 = lowest mean = hardest."])


def cross_model(facts: Facts, ex: Exchanges, *, effective: bool = True) -> tuple[Table, Table]:
    overall = ex.overall(effective)[:, 0]
    a_models = sorted(set(facts.team_a.tolist()))
    b_models = sorted(set(facts.team_b.tolist()))
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    for a, b, v in zip(ex.model(0).tolist(), ex.model(1).tolist(), overall.tolist(), strict=True):
        if not math.isnan(v):
            cells[(a, b)].append(v)
    cols = ["team_a_model", *b_models]
    means: list[list[Cell]] = [[a, *[statistics.fmean(cells[(a, b)]) if cells.get((a, b)) else None
                                     for b in b_models]] for a in a_models]
    counts: list[list[Cell]] = [[a, *[len(cells.get((a, b), [])) for b in b_models]] for a in a_models]
    cov = coverage(facts, effective)
    view = view_name(effective)
    return (
        Table("cross_model", "Cross-model matrix: Team A's mean score (rows: Team A, columns: Team B)",
              cols, means, view=view, coverage=cov,
              notes=["Cell: mean of Team A's overall score over the exchanges with that pairing; blank: none."]),
        Table("cross_model_n", "Cross-model matrix: exchanges with a Team A score", cols, counts, view=view,
              coverage=cov),
    )


def _quote(lines: list[str], limit: int = 2) -> str:
    return " … ".join(f"“{s}”" for s in lines[:limit])


def consistency_analysis(
    facts: Facts, ex: Exchanges, *, effective: bool = True,
    classifications: Mapping[str, ConsistencyClassification] | None = None,
) -> tuple[Table, Table]:
    cons = ex.criterion_means(effective)[:, 0, CONS]
    chosen = ex.text_round("consistency_test")
    codes = ex.dilemma_codes()
    model_names, model_of_row = facts.codes("team_a")
    model_code = model_of_row[ex.first]  # each exchange's Team A, numbered in the names' sorted order
    dil_names, dil_of_row = facts.codes("dilemma")
    dil_code = dil_of_row[ex.first]
    scored = ~np.isnan(cons)
    # per model: its scores and their dilemmas in exchange order (cluster_mean's input, as the loop gave it)
    per_scores = {model_names[m]: (cons[scored & (model_code == m)], codes[scored & (model_code == m)])
                  for m in np.unique(model_code[scored]).tolist()}
    answered = np.flatnonzero(chosen >= 0)
    unanswered = len(chosen) - len(answered)
    # the answers in the table's order: model, dilemma, exchange (the codes follow the names' sorted order,
    # and the exchanges are numbered in their ids' sorted order)
    answered = answered[np.lexsort((answered, dil_code[answered], model_code[answered]))]
    keys = [ex.keys[e] for e in answered.tolist()]
    given = [(classifications or {}).get(k) for k in keys]
    # the rules' classes of the answers shown (not classified by a model), read in one JSON parse
    ruled = [int(r) for r, g in zip(chosen[answered].tolist(), given, strict=True) if g is None]
    rule_iter = iter(_rule_classes(facts, ruled))
    labels: list[str] = []
    whos: list[str] = []
    cues: list[str] = []
    quotes: list[str] = []
    for g in given:
        if g is None:
            label, cue, quote = next(rule_iter)
            who = "rules"
        else:
            label, who = g.label, g.classifier
            cue, quote = ", ".join(dict.fromkeys(g.cues)), _quote(g.evidence)
        labels.append(label)
        whos.append(who)
        cues.append(cue)
        quotes.append(quote)
    scores: list[float | None] = [None if math.isnan(v) else v for v in cons[answered].tolist()]
    models_ans = [model_names[m] for m in model_code[answered].tolist()]
    answers: list[list[Cell]] = list(map(list, zip(
        models_ans, [dil_names[d] for d in dil_code[answered].tolist()], keys, scores, labels, whos, cues, quotes,
        strict=True)))
    per_answers = Counter(models_ans)
    per_classes = Counter(zip(models_ans, labels, strict=True))
    summary: list[list[Cell]] = []
    for model in sorted(set(per_scores) | set(per_answers)):
        vals, dil = per_scores.get(model, (np.zeros(0), np.zeros(0, dtype=np.int64)))
        mean, iv = cluster_mean(np.array(vals, dtype=float), np.array(dil, dtype=np.int64), clip=SCALE)
        summary.append([model, len(vals), mean, iv.low, iv.high, per_answers[model],
                        *[per_classes[(model, c)] for c in CONSISTENCY_CLASSES]])
    cov = coverage(facts, effective)
    view = view_name(effective)
    classifiers = sorted({str(r[5]) for r in answers}) or ["rules"]
    notes = [
        "Consistency score: the judges' 'consistency' score for Team A (the team that takes the test).",
        "Classes: " + "; ".join(f"{c} = {CONSISTENCY_LABELS[c]}" for c in CONSISTENCY_CLASSES) + ".",
        f"Classified by: {', '.join(classifiers)}"
        + (" (documented cue-phrase rules; see README)" if classifiers == ["rules"] else "") + ".",
        f"{unanswered} exchanges have no completed consistency-test answer.",
    ]
    return (
        Table("consistency_summary", "Consistency: judges' scores and answer classes per model",
              ["model", "n_scores", "mean_consistency", "ci95_low", "ci95_high", "answers", *CONSISTENCY_CLASSES],
              summary, view=view, coverage=cov, notes=notes),
        Table("consistency_answers", "Consistency: each consistency-test answer, classified, with its evidence",
              ["model", "dilemma", "exchange", "consistency_score", "class", "classifier", "cues", "evidence"],
              answers, view=view, coverage=cov, text_columns=frozenset({"evidence", "cues"}),
              notes=["Evidence: the answer's sentence(s) that matched the class's cue phrases, quoted."]),
    )


def _rule_classes(facts: Facts, rows: list[int]) -> list[tuple[str, str, str]]:
    """Facts.consistency_class of many rows (label, cues joined, evidence quoted), their JSON read at once."""
    if not rows:
        return []
    import json

    raw = facts.cls[np.asarray(rows, dtype=np.int64)].tolist()
    distinct = list(dict.fromkeys(raw))  # (each distinct record read and formatted once)
    held = json.loads("[" + ",".join(distinct) + "]")
    shown = dict(zip(distinct, [(label, ", ".join(dict.fromkeys(cues)), " … ".join(f"“{s}”" for s in evidence[:2]))
                                for label, cues, evidence in held], strict=True))
    return [shown[r] for r in raw]


def framework_usage(facts: Facts, ex: Exchanges) -> tuple[Table, Table]:
    # per (model, phase): answers, and per framework the answers mentioning it and the first one that did
    answers: dict[tuple[str, str], int] = defaultdict(int)
    hits: dict[tuple[str, str, str], int] = defaultdict(int)
    first: dict[tuple[str, str, str], tuple[int, str, str]] = {}  # -> (row, slot, source id)

    def tally(models: np.ndarray, phase: str, slots: np.ndarray, rows: np.ndarray, sources: list[str]) -> None:
        """Answers in order (rows of facts, the slot each is in, its source id)."""
        bits = facts.fw_bits[rows, slots] if len(rows) else np.zeros(0, dtype=np.int16)
        if not len(rows):
            return
        names, inv = levels(models)  # (np.unique of the names as text, by hashing the few distinct)
        for m_i, m in enumerate(names):
            sel = np.flatnonzero(inv == m_i)
            answers[(str(m), phase)] += len(sel)
            for k, fw in enumerate(FRAMEWORKS):
                has = sel[(bits[sel] >> k) & 1 == 1]
                if len(has):
                    hits[(str(m), phase, fw)] += len(has)
                    at = int(has[0])
                    first.setdefault((str(m), phase, fw), (int(rows[at]), SLOTS[int(slots[at])], sources[at]))

    keys_arr = ex.keys
    for p in PHASES:
        chosen = ex.text_round(p)
        exs = np.flatnonzero(chosen >= 0)
        tally(ex.model(PHASE_TEAM[p])[exs], p, np.full(len(exs), SLOTS.index(p)), chosen[exs],
              [keys_arr[e] for e in exs.tolist()])
    ids = facts.id.tolist()
    by_id = np.array(sorted(range(len(ids)), key=lambda i: ids[i]), dtype=np.int64)
    # the judges' remarks in round-id order, Team A's before Team B's within a round
    slot_ab = np.array([SLOTS.index("just_a"), SLOTS.index("just_b")])
    rows = np.repeat(by_id, 2)
    slots = np.tile(slot_ab, len(by_id))
    keep = facts.judged[rows] & (facts.text_len[rows, slots] >= 0) if len(rows) else np.zeros(0, dtype=bool)
    rows, slots = rows[keep], slots[keep]
    seat_models = np.where(slots == slot_ab[0], facts.team_a[rows], facts.team_b[rows]) if len(rows) else \
        np.empty(0, dtype=object)
    tally(seat_models, JUDGE_REMARKS, slots, rows, [ids[i] for i in rows.tolist()])
    texts = facts.quotes(sorted({row for row, _, _ in first.values()}))
    quotes = {key: (src, texts[row][slot][key[2]]) for key, (row, slot, src) in first.items()}
    order = [*PHASES, JUDGE_REMARKS]
    keys = sorted(answers, key=lambda k: (k[0], order.index(k[1])))
    usage: list[list[Cell]] = [[m, p, answers[(m, p)], *[hits.get((m, p, fw), 0) for fw in FRAMEWORKS]]
                               for m, p in keys]
    quote_rows: list[list[Cell]] = []
    for m, p in keys:
        for fw in FRAMEWORKS:
            if (m, p, fw) in quotes:
                src, sentence = quotes[(m, p, fw)]
                quote_rows.append([m, p, fw, src, f"“{sentence}”"])
    notes = ["Counts: answers (texts) in which at least one sentence matches the framework's lexicon "
             "(ebtui/core/frameworks.py, listed in the README). Reads no scores: the same in both views."]
    return (
        Table("framework_usage", "Framework usage: answers mentioning each framework, per model and phase",
              ["model", "phase", "answers", *FRAMEWORKS], usage, view=VIEW_BOTH, notes=notes, coverage=None),
        Table("framework_quotes", "Framework usage: first matching sentence per model, phase and framework",
              ["model", "phase", "framework", "source", "quote"], quote_rows, view=VIEW_BOTH,
              text_columns=frozenset({"quote"}),
              notes=["source: exchange id (debate phases) or round id (judge remarks)."]),
    )


def judge_agreement(facts: Facts, ex: Exchanges) -> tuple[Table, Table]:
    """As ebtui.core.analysis.agreement.judge_agreement (judges' parsed scores only), from the columns: per
    criterion a judges x units matrix (a unit: one team in one exchange scored by two or more judges; a cell:
    the judge's mean over its judgments of that exchange), built with numpy group-bys."""
    judged = facts.judged
    judge_names, judge_code = facts.codes("judge")
    E = len(ex)
    rows_j = np.flatnonzero(judged)
    # exchanges scored by two or more different judges
    pair = distinct_ints(ex.of_round[rows_j].astype(np.int64) * max(len(judge_names), 1) + judge_code[rows_j])
    n_judges = np.bincount(pair // max(len(judge_names), 1), minlength=E)
    panel_ex = np.flatnonzero(n_judges >= 2)
    in_panel = np.zeros(E, dtype=bool)
    in_panel[panel_ex] = True
    panel_rows = np.flatnonzero(in_panel[ex.of_round])
    rated = panel_rows[judged[panel_rows]]  # the panel's judgments, in input order
    used = np.unique(judge_code[rated])
    judges = [judge_names[int(c)] for c in used]  # the codes follow the names' sorted order
    jpos = np.full(len(judge_names), -1, dtype=np.int64)
    jpos[used] = np.arange(len(used))
    upos = np.full(E, -1, dtype=np.int64)
    upos[panel_ex] = np.arange(len(panel_ex))
    n_units = 2 * len(panel_ex)
    cov = coverage(facts.take(panel_rows.astype(np.int64)), False)
    parsed = facts.parsed[rated].astype(np.int64)  # [n, 2, 7]
    given = parsed > 0
    n_given = given.sum(axis=2)

    def matrix(k: int | None) -> np.ndarray:
        """judges x units (unit = 2 * panel exchange + team): the fmean of a judge's values for the unit."""
        if k is None:  # a judgment's mean of the criteria it gave
            with np.errstate(invalid="ignore", divide="ignore"):
                vals = np.where(n_given > 0, parsed.sum(axis=2) / np.where(n_given > 0, n_given, 1), np.nan)
        else:
            vals = np.where(given[:, :, k], parsed[:, :, k].astype(float), np.nan)
        unit = 2 * upos[ex.of_round[rated]][:, None] + np.arange(2)[None, :]
        cell = (jpos[judge_code[rated]][:, None] * n_units + unit).ravel()
        flat = vals.ravel()
        keep = ~np.isnan(flat)
        cell, flat = cell[keep], flat[keep]
        out = np.full(len(judges) * n_units, np.nan)
        cells, _, inv = int_unique(cell)  # (np.unique's arrays, without a sort)
        cnt = np.bincount(inv, minlength=len(cells))
        total = np.zeros(len(cells))
        np.add.at(total, inv, flat)  # one or two values: their sum exactly as math.fsum gives it
        for c in np.flatnonzero(cnt > 2).tolist():  # three or more judgments by one judge: statistics.fmean
            total[c] = math.fsum(flat[inv == c].tolist())
        out[cells] = total / cnt
        return out.reshape(len(judges), n_units)

    alpha_rows: list[list[Cell]] = []
    corr_rows: list[list[Cell]] = []
    for k, c in enumerate((*CRITERIA, OVERALL)):
        data = matrix(None if c == OVERALL else k) if judges else None
        alpha: float | None = None
        pairable = int(np.sum(np.sum(~np.isnan(data), axis=0) >= 2)) if data is not None and data.size else 0
        if data is not None and pairable >= 1 and len(judges) >= 2:
            alpha = krippendorff_interval(data)
        ratings = int(np.sum(~np.isnan(data))) if data is not None and data.size else 0
        icc = None
        complete = 0
        if data is not None and data.size and len(judges) >= 2:
            full = data[:, ~np.isnan(data).any(axis=0)]
            complete = full.shape[1]
            icc = icc_2_1(full.T) if complete >= 2 else None
        alpha_rows.append([c, pairable, len(judges), ratings, alpha, complete, icc])
        scored = ~np.isnan(data) if data is not None else None
        for (a, j1), (b, j2) in combinations(enumerate(judges), 2):
            assert data is not None and scored is not None
            both = scored[a] & scored[b]
            n_pairs = int(both.sum())
            r_p = p_p = r_s = p_s = None
            if n_pairs >= 3:
                x, y = np.column_stack([data[a][both], data[b][both]]).T
                if np.ptp(x) > 0 and np.ptp(y) > 0:  # (scipy.stats.pearsonr/spearmanr's floats, not its import)
                    r_p, p_p = pearson(x, y)
                    r_s, p_s = spearman(x, y)
            corr_rows.append([c, j1, j2, n_pairs, r_p, p_p, r_s, p_s])
    panel_note = (f"{len(panel_ex)} exchanges were scored by two or more judges ({len(judges)} judges); "
                  "a unit is one team in one exchange. Judges' parsed scores only: human overrides never count.")
    view = view_name(False)
    return (
        Table("judge_agreement", "Judge agreement per criterion: Krippendorff's alpha and ICC(2,1)",
              ["criterion", "units_pairable", "judges", "ratings", "alpha", "units_complete", "icc"],
              alpha_rows, view=view, coverage=cov,
              notes=[panel_note, "alpha: krippendorff.alpha, interval level (1 = perfect agreement, 0 = chance); "
                     "icc: ICC(2,1), absolute agreement, over the units every judge scored. Blank: not computable."]),
        Table("judge_correlation", "Judge agreement: pairwise correlation per criterion",
              ["criterion", "judge_1", "judge_2", "n", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"],
              corr_rows, view=view, coverage=cov,
              notes=["scipy.stats.pearsonr / spearmanr over the units both judges scored; blank with fewer "
                     "than 3 units or a judge gave the same value throughout."]),
    )


def analyse(facts: Facts, *, effective: bool = True,
            classifications: Mapping[str, ConsistencyClassification] | None = None,
            ex: Exchanges | None = None) -> list[Table]:
    """analysis.analyse over the columns: the descriptive score tables for one view."""
    ex = ex or Exchanges.of(facts)
    return [
        model_comparison(facts, ex, effective=effective),
        dilemma_difficulty(facts, ex, effective=effective),
        *cross_model(facts, ex, effective=effective),
        *consistency_analysis(facts, ex, effective=effective, classifications=classifications),
        *judge_agreement(facts, ex),
    ]


def has_overrides(facts: Facts) -> bool:
    return any(o is not None for o in facts.overrides.tolist())


def judge_vs_human(facts: Facts, *, seed: int, replicates: int) -> Table | None:
    diffs: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for i in np.flatnonzero(facts.judged & np.array([o is not None for o in facts.overrides.tolist()],
                                                    dtype=bool)).tolist():
        for _team, _crit, parsed, value, _note in facts.override_rows(i):
            if parsed is not None and value is not None:
                diffs[str(facts.judge[i])].append((float(parsed - value), str(facts.dilemma[i])))
    if not diffs:
        return None
    rows: list[list[Cell]] = []
    for j in sorted(diffs):
        est, iv = cluster_mean([v for v, _ in diffs[j]], [d for _, d in diffs[j]], seed=seed, replicates=replicates)
        rows.append([j, len(diffs[j]), len({d for _, d in diffs[j]}), est, iv.low, iv.high, iv.note])
    from ebtui.core.analysis.common import VIEW_EFFECTIVE

    return Table("judge_vs_human", "Judges against the humans: the judge's score minus the human's override",
                 ["judge", "n", "n_dilemmas", "offset_vs_human", "ci_low", "ci_high", "interval_note"], rows,
                 view=VIEW_EFFECTIVE,
                 notes=["Only overridden scores the judge had given (a filled-in missing score has nothing to "
                        "compare). Positive: the judge scored higher than the human."])


def provenance_summary(facts: Facts) -> list[dict[str, Any]]:
    """ebtui.core.importers.eb.provenance_summary from the columns."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for i in range(len(facts)):
        imp = facts.imported_of(i)
        if imp is not None:
            groups.setdefault((imp["runner"], imp["run"]), []).append(imp)
    return [{"runner": runner, "run": run, "n_rounds": len(imps), "source_files": sorted({i["file"] for i in imps}),
             "defaulted": sum(i["defaulted"] for i in imps), "disagreements": sum(i["disagreements"] for i in imps)}
            for (runner, run), imps in sorted(groups.items())]
