"""The judge-bias section's input from the analysis columns (ebtui.core.analysis.frame.Facts: one row per
judgment, with each team's word count and formatting elements and the judgment's reading order and origin),
so the section is computed at any store size without reading a transcript.

`long_table_of_facts` gives exactly what ebtui.core.analysis.judge_bias.long_table gives for the same rounds
(tests/unit/analysis/test_bias_source.py checks it on generated stores). `judge_bias_section_of_facts` is the
section (ebtui.core.analysis.bias_report.judge_bias_section) over those columns: the fit of a long table,
then the flip rates and reliability of judgment-only stand-ins of the rounds (`judgment_rounds`: scores,
judge, order, exchange and dilemma — all those functions read) — an adapter until the judge-bias functions
take a LongTable or columns themselves.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ebtui.core.analysis import bootstrap
from ebtui.core.analysis.frame import NC, Facts, _codes
from ebtui.core.records import CRITERIA

if TYPE_CHECKING:
    from ebtui.core.analysis.bias_types import BiasJson, BiasSection
    from ebtui.core.analysis.judge_bias import AgreementMap, BiasFit, LongTable
    from ebtui.core.records import Round


def long_table_of_facts(facts: Facts, family_of: Callable[[str], str], *, agreement: AgreementMap | None = None,
                        effective: bool = False) -> LongTable:
    """One row per judgment x team x criterion the judge scored, from the columns: judge_bias.long_table's
    rows in its order (judgment, Team A then B, criteria in CRITERIA order), the style of a team in an
    exchange taken from the exchange's first judged row (as long_table keeps the first it meets)."""
    from ebtui.core.analysis.judge_bias import LongTable

    judged = np.flatnonzero(facts.judged)
    s = facts.scores(effective)[judged]  # [J, 2, NC]; 0 = missing
    missing = int((s == 0).sum())
    j_idx, seat_i, c_idx = (x.astype(np.int64) for x in np.nonzero(s > 0))  # C order: judgment, seat, criterion
    r_idx = judged[j_idx]  # the Facts row
    y = s[j_idx, seat_i, c_idx].astype(float)
    models, mi = _codes(facts.codes("seat_model"), np.where(seat_i == 0, r_idx, r_idx + len(facts)))
    judges, ji = _codes(facts.codes("judge"), r_idx)
    dilemmas, di = _codes(facts.codes("dilemma"), r_idx)
    used = sorted(np.unique(c_idx).tolist(), key=lambda c: CRITERIA[c])
    pos = np.full(NC, -1, dtype=np.int64)
    pos[used] = np.arange(len(used))
    criteria = [CRITERIA[c] for c in used]
    # family: the scored model's and the judge's
    fam = {n: family_of(n) for n in set(models) | set(judges)}
    same = np.array([[fam[m] == fam[j] for j in judges] for m in models], dtype=bool) \
        if models and judges else np.zeros((0, 0), dtype=bool)
    family = same[mi, ji].astype(float) if len(y) else np.zeros(0)
    seat = np.where(seat_i == 0, 0.5, -0.5)
    ba = facts.order[r_idx] == "ba" if len(r_idx) else np.zeros(0, dtype=bool)
    first = np.where((seat_i == 1) == ba, 0.5, -0.5)  # the team read first: B in order "ba", else A
    # style: the exchange's first judged row's
    ex_names, ex_code = facts.codes("exchange")
    first_row = np.full(len(ex_names), -1, dtype=np.int64)
    if len(judged):
        _, at = np.unique(ex_code[judged], return_index=True)
        first_row[ex_code[judged][at]] = judged[at]
    src = first_row[ex_code[r_idx]] if len(r_idx) else np.zeros(0, dtype=np.int64)
    words = facts.style[src, 2 * seat_i].astype(float) if len(r_idx) else np.zeros(0)
    elements = facts.style[src, 2 * seat_i + 1].astype(float) if len(r_idx) else np.zeros(0)
    density = np.divide(100.0 * elements, words, out=np.zeros_like(words), where=words > 0)
    agree = np.full(len(y), np.nan)
    if agreement:
        per_row = np.full((len(facts), 2), np.nan)
        for i in judged.tolist():
            seen = agreement.get((str(facts.judge[i]), str(facts.exchange[i])), {})
            for t, team in enumerate(("a", "b")):
                ag = seen.get(team)
                if ag is not None:
                    per_row[i, t] = float(bool(ag))
        agree = per_row[r_idx, seat_i]
    rounds = set(facts.round.tolist())
    without = len(set(facts.round[facts.own_missing].tolist()))
    return LongTable(y, mi, ji, di, pos[c_idx], seat, family, first, words / 100.0, density, agree, models, judges,
                     dilemmas, criteria, judgments=len(judged), rounds=len(rounds), without_judgment=without,
                     scores_missing=missing)


def judgment_rounds(facts: Facts) -> list[Round]:
    """Each row as a round of its own holding only its judgment's parsed scores, judge, reading order and
    origin (no transcript): what judge_bias.flip_rates and reliability.reliability_json read of the rounds
    expand_judgments gives. A row without a judgment: a round without one."""
    from ebtui.core.records import Judgment, Round, Scores

    # copies of one template each (model_copy: no validation of values that came from validated rounds, and
    # no default factories run — model_construct runs them, 40 times slower here)
    blank_scores = Scores()
    judgment = Judgment()
    template = Round(id="-", dilemma_id="-", team_a_model="-", team_b_model="-", judge_model="-")
    out: list[Round] = []
    parsed = facts.parsed.tolist()
    for i in range(len(facts)):
        j = None
        if facts.judged[i]:
            a, b = ({c: (v or None) for c, v in zip(CRITERIA, parsed[i][t], strict=True)} for t in (0, 1))
            j = judgment.model_copy(update={
                "team_a_scores": blank_scores.model_copy(update=a), "team_b_scores": blank_scores.model_copy(update=b),
                "order": str(facts.order[i]), "origin": str(facts.origin[i]), "key": str(facts.key[i]),
                "judge_model": str(facts.judge[i])})
        out.append(template.model_copy(update={
            "id": str(facts.id[i]), "dilemma_id": str(facts.dilemma[i]), "team_a_model": str(facts.team_a[i]),
            "team_b_model": str(facts.team_b[i]), "judge_model": str(facts.judge[i]), "judgment": j,
            "exchange_id": str(facts.exchange[i])}))
    return out


def judgment_counts_of_facts(facts: Facts) -> dict[str, int]:
    """judge_bias.judgment_counts of the rounds the columns hold."""
    judged = facts.judged
    return {"rounds": len(set(facts.round.tolist())), "judgments": int(judged.sum()),
            "rejudged": int((judged & (facts.origin == "rejudge")).sum()),
            "order_ba": int((judged & (facts.order == "ba")).sum())}


def bias_fit_of_table(t: LongTable, *, seed: int = bootstrap.DEFAULT_SEED,
                      replicates: int = bootstrap.DEFAULT_REPLICATES) -> BiasFit | None:
    """judge_bias.bias_fit over a long table already built (the same steps after its long_table call)."""
    from ebtui.core.analysis import judge_bias as jb

    if len(t.y) == 0:
        return None
    terms, X, y, full_rank = jb._separable(t, jb.build_terms(t))
    M = len(t.models)
    est = jb._vector(terms, jb._solve(X, y), M)
    base_terms, Xb, yb, _ = jb._separable(t, jb.build_terms(t, style=False, order=False, agreement=False))
    base = jb._vector(base_terms, jb._solve(Xb, yb), M)[:M]
    G = len(t.dilemmas)
    draws = np.full((0, len(est)), np.nan)
    if G >= bootstrap.MIN_CLUSTERS:
        blocks = jb._Blocks(terms.X[:, 1:], t.y, t.dilemma, G)
        has_model = np.zeros((G, M), bool)
        has_model[t.dilemma, t.model] = True
        has_judge = np.zeros((G, len(t.judges)), bool)
        has_judge[t.dilemma, t.judge] = True
        rng = np.random.default_rng(seed)
        draws = np.full((replicates, len(est)), np.nan)
        for b in range(replicates):
            picks = rng.integers(0, G, size=G)
            if not has_model[picks].any(axis=0).all() or not has_judge[picks].any(axis=0).all():
                continue  # a replicate that lost a model or a judge
            draws[b] = jb._vector(terms, blocks.solve(picks), M)
    return jb.BiasFit(t, terms, est, draws, full_rank, base)


def bias_json_of_facts(facts: Facts, *, families: Mapping[str, str] | None = None,
                       agreement: AgreementMap | None = None, effective: bool = False,
                       seed: int = bootstrap.DEFAULT_SEED, replicates: int = bootstrap.DEFAULT_REPLICATES,
                       stand_ins: list[Round] | None = None) -> BiasJson:
    """judge_bias.bias_json over the columns (the same numbers and notes for the same rounds)."""
    from ebtui.core.analysis import judge_bias as jb
    from ebtui.core.analysis.bias_types import (
        AgreementRow,
        BiasFitInfo,
        OrderRow,
        StyleCoefficient,
        StyleModel,
    )
    from ebtui.core.families import family_function

    t = long_table_of_facts(facts, family_function(families), agreement=agreement, effective=effective)
    bf = bias_fit_of_table(t, seed=seed, replicates=replicates)
    if bf is None:
        note = "no score to fit"
        return {"style": {"coefficients": [], "models": [], "n_scores": 0, "note": note}, "order": [],
                "agreement_bias": [], "judge_bias_fit": {"n_scores": 0, "note": note}}
    G = len(t.dilemmas)
    blank = bootstrap.blank_note(G)
    notes = [*bf.terms.notes, *([blank] if blank else [])]
    excluded = jb._excluded(t)
    coefs: list[StyleCoefficient] = []
    for name, unit, what in (("length", jb.WORDS_UNIT, t.words), ("format_density", jb.FORMAT_UNIT, t.density)):
        est, iv = bf.term(name)
        if bf.terms.col(name) is None:
            iv = bootstrap.Interval(None, None, "no variation across the teams' texts: not estimable")
        coefs.append({"term": name, "estimate": est, "ci_low": iv.low, "ci_high": iv.high, "unit": unit,
                      "mean": float(np.mean(what)), "sd": float(np.std(what)), "n": int(len(t.y)),
                      "interval_note": iv.note})
    raw = defaultdict(list)
    for m, v in zip(t.model.tolist(), t.y.tolist(), strict=True):
        raw[m].append(v)
    models: list[StyleModel] = []
    for i, m in enumerate(t.models):
        est, iv = bf.model(i)
        models.append({"model": m, "raw_mean": float(np.mean(raw[i])), "mean_without_style": float(bf.base_adjusted[i]),
                       "adjusted_mean": est, "mean": est, "ci_low": iv.low, "ci_high": iv.high, "n_scores": len(raw[i]),
                       "interval_note": iv.note})
    rounds = stand_ins if stand_ins is not None else judgment_rounds(facts)
    flips = jb.flip_rates(rounds, effective=effective, seed=seed, replicates=replicates)
    order: list[OrderRow] = []
    n_by_judge: dict[str, dict[str, int]] = defaultdict(lambda: {"ab": 0, "ba": 0})
    for i in np.flatnonzero(facts.judged).tolist():
        n_by_judge[str(facts.judge[i])][str(facts.order[i])] += 1
    for name in t.judges:
        est, iv = bf.term(f"order:{name}")
        f = flips.get(name)
        note = iv.note if name in bf.terms.order_judges else "read in one order only: not separable from the seat"
        note = note or ("" if est is not None else iv.note)
        order.append({"judge": name, "effect": est, "ci_low": iv.low, "ci_high": iv.high,
                      "flip_rate": f["flip_rate"] if f else None, "flip_ci_low": f["flip_ci_low"] if f else None,
                      "flip_ci_high": f["flip_ci_high"] if f else None, "flip_pairs": f["flip_pairs"] if f else 0,
                      "n": n_by_judge[name]["ab"] + n_by_judge[name]["ba"], "n_ab": n_by_judge[name]["ab"],
                      "n_ba": n_by_judge[name]["ba"], "interval_note": note})
    agree: list[AgreementRow] = []
    for j, name in enumerate(t.judges):
        mine = t.judge == j
        known = mine & np.isfinite(t.agree)
        est, iv = bf.term(f"agree:{name}")
        if name in bf.terms.agree_judges:
            note = iv.note
        elif not known.any():
            note = "no agreement data (no own view or no team conclusion classified)"
        else:
            note = "every team it scored agreed (or every one disagreed): not estimable"
        n_teams = int(known.sum() // max(len(t.criteria), 1))
        agree.append({"judge": name, "effect": est, "ci_low": iv.low, "ci_high": iv.high, "n": n_teams,
                      "n_scores": int(known.sum()), "n_agree_scores": int((t.agree[known] == 1).sum()),
                      "interval_note": note})
    fit_info: BiasFitInfo = {"n_scores": int(len(t.y)), "judgments": t.judgments, "dilemmas": G,
                             "models": len(t.models), "judges": len(t.judges), "terms": list(bf.terms.names),
                             "full_rank": bf.full_rank,
                             "replicates_used": int(np.isfinite(bf.draws[:, 0]).sum()) if bf.draws.size else 0,
                             "excluded": excluded, "notes": notes}
    return {
        "style": {"coefficients": coefs, "models": models, "n_scores": int(len(t.y)), "excluded": excluded,
                  "notes": notes},
        "order": order,
        "agreement_bias": agree,
        "judge_bias_fit": fit_info,
    }


def judge_bias_section_of_facts(facts: Facts, *, families: Mapping[str, str] | None = None,
                                agreement: AgreementMap | None = None, seed: int = bootstrap.DEFAULT_SEED,
                                replicates: int = bootstrap.DEFAULT_REPLICATES) -> BiasSection:
    """bias_report.judge_bias_section over the columns (the judges' parsed scores, overrides not applied)."""
    from ebtui.core.analysis.reliability import reliability_json

    stand_ins = judgment_rounds(facts)
    out = bias_json_of_facts(facts, families=families, agreement=agreement, seed=seed, replicates=replicates,
                             stand_ins=stand_ins)
    return {**out, "reliability": reliability_json(stand_ins, seed=seed, replicates=min(replicates, 400)),
            "judgments": judgment_counts_of_facts(facts)}


# ---- a cache beside the columns ---------------------------------------------------------------------------

#: the modules whose code the section's numbers come from: a change to any of them is a new cache key
_CODE = ("bias_source", "judge_bias", "reliability", "bias_report", "bootstrap", "fit", "frame")


def section_key(facts: Facts, *, families: Mapping[str, str] | None, agreement: AgreementMap | None, seed: int,
                replicates: int) -> str:
    """A hash of everything `judge_bias_section_of_facts` reads: the columns' rows it uses, the families, the
    agreement map, seed, replicates, and the code of the modules it runs (_CODE)."""
    import hashlib
    import importlib

    h = hashlib.sha256()
    for mod in _CODE:
        path = getattr(importlib.import_module(f"ebtui.core.analysis.{mod}"), "__file__", None)
        if path:
            with open(path, "rb") as fh:
                h.update(fh.read())
    for name in ("id", "round", "exchange", "dilemma", "team_a", "team_b", "judge", "order", "origin", "key"):
        h.update("\x1f".join(map(str, getattr(facts, name).tolist())).encode("utf-8", "surrogatepass") + b"\x1e")
    for arr in (facts.judged, facts.own_missing, facts.parsed, facts.style):
        h.update(np.ascontiguousarray(arr).tobytes())
    h.update(repr(sorted((families or {}).items())).encode())
    h.update(repr(sorted((k, sorted(v.items())) for k, v in (agreement or {}).items())).encode())
    h.update(f"{seed}|{replicates}".encode())
    return h.hexdigest()


def cached_section(folder: Path | None, facts: Facts, *, families: Mapping[str, str] | None = None,
                   agreement: AgreementMap | None = None, seed: int = bootstrap.DEFAULT_SEED,
                   replicates: int = bootstrap.DEFAULT_REPLICATES) -> BiasSection:
    """`judge_bias_section_of_facts`, kept in `folder`/bias_section.json (the store's columns folder) under
    `section_key`: a report whose rows, families, agreement, seed and code are unchanged reads it back
    instead of refitting (the section costs seconds from 10,000 judgments on). folder None, or not writable:
    computed every time."""
    import json
    import os

    key = section_key(facts, families=families, agreement=agreement, seed=seed, replicates=replicates)
    path = folder / "bias_section.json" if folder is not None else None
    if path is not None:
        try:
            held = json.loads(path.read_bytes())
            if isinstance(held, dict) and held.get("key") == key:
                got: BiasSection = held["section"]
                return got
        except (OSError, ValueError, KeyError):
            pass
    section = judge_bias_section_of_facts(facts, families=families, agreement=agreement, seed=seed,
                                          replicates=replicates)
    if path is not None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps({"key": key, "section": section}, allow_nan=True), encoding="utf-8")
            os.replace(tmp, path)
        except (OSError, TypeError, ValueError):
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return section
