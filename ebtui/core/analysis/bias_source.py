"""The judge-bias section from the analysis columns (one row per judgment, with each team's words and
formatting elements and each judgment's reading order and origin), at any store size without reading a
transcript: the fit's long table (`long_table_of_facts`), the section itself (`judge_bias_section_of_facts`:
the fit, reliability, flip rates and counts from the columns' arrays), section 2's self and same-family
preference (`preferences_of_facts`), caches of both beside the columns (`cached_section`,
`cached_preferences`), and `stand_in_rounds` (rounds holding only what the section reads)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ebtui.core.analysis import bootstrap
from ebtui.core.analysis.ahead import taken
from ebtui.core.analysis.common import keep_newest, read_entries
from ebtui.core.analysis.frame import NC, Facts, used_codes
from ebtui.core.records import CRITERIA

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ebtui.core.analysis.bias_types import (
        AlphaRow,
        BiasSection,
        FlipRate,
        PreferenceRow,
        ReliabilityJson,
        RetestRow,
    )
    from ebtui.core.analysis.judge_bias import AgreementMap, LongTable
    from ebtui.core.records import Round

_M = TypeVar("_M", bound="BaseModel")
def long_table_of_facts(facts: Facts, family_of: Callable[[str], str], *, agreement: AgreementMap | None = None,
                        effective: bool = False) -> LongTable:
    """One row per judgment x team x criterion the judge scored, from the columns: judge_bias.long_table's
    rows in its order (judgment, Team A then B, criteria in CRITERIA order), the style of a team in an
    exchange taken from the exchange's first judged row (as long_table keeps the first it meets)."""
    from ebtui.core.analysis.judge_bias import LongTable

    judged = np.flatnonzero(facts.judged)
    s = facts.scores(effective)[judged]  # [J, 2, NC]; 0 = missing
    missing = int((s == 0).sum())
    # (compact types: a row per score, two million at 100,000 rounds; every value exact in them)
    j_idx, seat_i, c_idx = (x.astype(np.int32) for x in np.nonzero(s > 0))  # C order: judgment, seat, criterion
    y = s[j_idx, seat_i, c_idx].astype(np.float32)
    del s
    r_idx = judged[j_idx]  # the Facts row
    models, mi = used_codes(facts.codes("seat_model"), np.where(seat_i == 0, r_idx, r_idx + len(facts)))
    judges, ji = used_codes(facts.codes("judge"), r_idx)
    dilemmas, di = used_codes(facts.codes("dilemma"), r_idx)
    mi, ji, di = mi.astype(np.int32), ji.astype(np.int32), di.astype(np.int32)
    used = sorted(np.unique(c_idx).tolist(), key=lambda c: CRITERIA[c])
    pos = np.full(NC, -1, dtype=np.int32)
    pos[used] = np.arange(len(used))
    criteria = [CRITERIA[c] for c in used]
    # family: the scored model's and the judge's
    fam = {n: family_of(n) for n in set(models) | set(judges)}
    same = np.array([[fam[m] == fam[j] for j in judges] for m in models], dtype=bool) \
        if models and judges else np.zeros((0, 0), dtype=bool)
    family = same[mi, ji].astype(np.float32) if len(y) else np.zeros(0, dtype=np.float32)
    seat = np.where(seat_i == 0, 0.5, -0.5).astype(np.float32)
    ba = facts.order[judged] == "ba"
    first = np.where((seat_i == 1) == ba[j_idx], 0.5, -0.5).astype(np.float32)  # read first: B in "ba", else A
    # style: the exchange's first judged row's, per judgment and seat [J, 2] (words per 100, density), then
    # per row: the team's own and the other team's (the relative-length and -formatting covariates)
    ex_names, ex_code = facts.codes("exchange")
    first_row = np.full(len(ex_names), -1, dtype=np.int64)
    if len(judged):
        _, at = np.unique(ex_code[judged], return_index=True)
        first_row[ex_code[judged][at]] = judged[at]
    src = first_row[ex_code[judged]] if len(judged) else np.zeros(0, dtype=np.int64)
    st = facts.style[src].astype(float).reshape(len(judged), 2, 2)  # judgment, seat, (words, elements)
    wj = st[:, :, 0]
    dj = np.divide(100.0 * st[:, :, 1], wj, out=np.zeros_like(wj), where=wj > 0)
    wj = wj / 100.0
    words, density = wj[j_idx, seat_i], dj[j_idx, seat_i]
    o_words, o_density = wj[j_idx, 1 - seat_i], dj[j_idx, 1 - seat_i]
    agree = np.full(len(y), np.nan, dtype=np.float32)
    if agreement:
        per_row = np.full((len(facts), 2), np.nan, dtype=np.float32)
        for i in judged.tolist():
            seen = agreement.get((str(facts.judge[i]), str(facts.exchange[i])), {})
            for t, team in enumerate(("a", "b")):
                ag = seen.get(team)
                if ag is not None:
                    per_row[i, t] = float(bool(ag))
        agree = per_row[r_idx, seat_i]
    rounds = set(facts.round.tolist())
    without = len(set(facts.round[facts.own_missing].tolist()))
    return LongTable(y, mi, ji, di, pos[c_idx], seat, family, first, words, density, agree, models, judges,
                     dilemmas, criteria, judgments=len(judged), rounds=len(rounds), without_judgment=without,
                     scores_missing=missing, judgment=j_idx, other_words=o_words, other_density=o_density)


def _text_of_style(words: int, elements: int) -> str:
    """A text `style.text_style` measures as `words` words and `elements` formatting elements: inline code
    spans `x` (one word and one element each; several glued together in the first word when there are more
    elements than words), then plain words."""
    if words <= 0:
        return ""
    spans = min(elements, words)
    first = "`x`" * (elements - words + 1) if elements > words else ("`x`" if spans else "x")
    rest = ["`x`"] * (spans - 1 if spans else 0) + ["x"] * (words - max(spans, 1))
    return " ".join([first, *rest])


def _copy(model: _M, update: dict[str, Any]) -> _M:
    """`model.model_copy(update=update)` without its per-object detour through the copy module (a shallow
    copy of the fields with `update` applied, the fields set noted, the extra fields' dict copied; no
    private attributes on these models): 2 x faster over the ~10 objects a stand-in round holds."""
    new = model.__class__.__new__(model.__class__)
    fields = dict(model.__dict__)
    fields.update(update)
    extra = model.__pydantic_extra__
    object.__setattr__(new, "__dict__", fields)
    object.__setattr__(new, "__pydantic_extra__", None if extra is None else dict(extra))
    object.__setattr__(new, "__pydantic_fields_set__", model.__pydantic_fields_set__ | update.keys())
    object.__setattr__(new, "__pydantic_private__", None)
    return new


def stand_in_rounds(facts: Facts) -> list[Round]:
    """The rounds the columns were read from, as the judge-bias section reads them and nothing more: per
    round its own judgment (None when missing) and the judgments added later, each with its parsed scores,
    overrides in force, judge, reading order, origin and key; seats, judge, dilemma and exchange; and per team
    one answer whose words and formatting elements are the team's (`_text_of_style`) — no transcript. The
    judge-bias functions (judge_bias, reliability, bias_report) give on these exactly what they give on the
    real rounds (tests/unit/analysis/test_bias_source.py)."""
    from ebtui.core.facts import seat_phases
    from ebtui.core.records import Judgment, Override, Phase, PhaseStatus, Round, Scores

    # copies of one template each (model_copy: no validation of values that came from validated rounds, and
    # no default factories run — model_construct runs them, 40 times slower here)
    blank_scores = Scores()
    blank_judgment = Judgment()
    template = Round(id="-", dilemma_id="-", team_a_model="-", team_b_model="-", judge_model="-")
    phase = Phase(phase_type=seat_phases("a")[0], model_id="-", status=PhaseStatus.COMPLETE)
    for blank in (blank_scores, blank_judgment, template, phase):
        assert blank.__pydantic_private__ is None  # (what _copy leaves out)
    first_phase = {team: seat_phases(team)[0] for team in ("a", "b")}
    parsed = facts.parsed.tolist()
    style = facts.style.tolist()
    rows_of: dict[str, list[int]] = {}
    for i, rid in enumerate(facts.round.tolist()):
        rows_of.setdefault(rid, []).append(i)

    def judgment(i: int) -> Judgment:
        a, b = ({c: (v or None) for c, v in zip(CRITERIA, parsed[i][t], strict=True)} for t in (0, 1))
        ovs = [Override(team=team, criterion=crit, parsed_value=pv, value=value, note=note)
               for team, crit, pv, value, note in facts.override_rows(i)]
        return _copy(blank_judgment, {
            "team_a_scores": _copy(blank_scores, a), "team_b_scores": _copy(blank_scores, b),
            "order": str(facts.order[i]), "origin": str(facts.origin[i]), "key": str(facts.key[i]),
            "judge_model": str(facts.judge[i]), "overrides": ovs})

    out: list[Round] = []
    for rid, rows in rows_of.items():
        i = rows[0]
        judged = [judgment(k) for k in rows if facts.judged[k]]
        own = None if facts.own_missing[i] else (judged.pop(0) if judged else None)
        seats = {"a": str(facts.team_a[i]), "b": str(facts.team_b[i])}
        phases = [_copy(phase, {"phase_type": first_phase[team], "model_id": seats[team],
                                "response": _text_of_style(style[i][2 * t], style[i][2 * t + 1])})
                  for t, team in enumerate(("a", "b")) if style[i][2 * t] > 0]
        out.append(_copy(template, {
            "id": rid, "dilemma_id": str(facts.dilemma[i]), "team_a_model": seats["a"], "team_b_model": seats["b"],
            "judge_model": str(facts.judge[i]), "judgment": own, "extra_judgments": judged,
            "exchange_id": str(facts.exchange[i]), "phases": phases}))
    return out


def _winners(facts: Facts) -> list[tuple[str, str, str, str, str]]:
    """judge_bias.flip_rates' winners from the columns (parsed scores): per judged row in order, its judge,
    exchange, dilemma, reading order and the team with the higher mean score ("tie"; none when a team has no
    score)."""
    judged = np.flatnonzero(facts.judged)
    s = facts.parsed[judged].astype(np.int64)  # [J, 2, NC]; 0 = missing
    n = (s > 0).sum(axis=2)
    tot = s.sum(axis=2)
    ok = (n > 0).all(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = tot / np.where(n > 0, n, 1)
    win = np.where(mean[:, 0] > mean[:, 1], "a", np.where(mean[:, 1] > mean[:, 0], "b", "tie"))
    rows = judged[ok]
    return list(zip(facts.judge[rows].tolist(), facts.exchange[rows].tolist(), facts.dilemma[rows].tolist(),
                    facts.order[rows].tolist(), win[ok].tolist(), strict=True))


def flip_rates_of_facts(facts: Facts, *, seed: int = bootstrap.DEFAULT_SEED,
                        replicates: int = bootstrap.DEFAULT_REPLICATES) -> dict[str, FlipRate]:
    """judge_bias.flip_rates from the columns, by counting: per (judge, exchange) with both orders, the share
    of its (ab, ba) winner pairs that differ is 1 - sum over winners of n_ab(w) n_ba(w) / (n_ab n_ba) — the same
    exact quotient as the mean of the pairs' 0/1 flips; the exchanges in the order flip_rows meets them."""
    wins = _winners(facts)
    if not wins:
        return {}
    judge, ex, dilemma, order, win = (np.array(x, dtype=object) for x in zip(*wins, strict=True))
    _, jc = np.unique(judge.astype(str), return_inverse=True)
    _, ec = np.unique(ex.astype(str), return_inverse=True)
    key = jc.reshape(-1).astype(np.int64) * (int(ec.max()) + 1) + ec.reshape(-1)
    keys, first, inv = np.unique(key, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    w = np.select([win == "a", win == "b"], [0, 1], 2)
    ba = (order == "ba").astype(np.int64)
    n = np.zeros((len(keys), 2, 3))
    np.add.at(n, (inv, ba, w), 1.0)
    n_ab, n_ba = n[:, 0].sum(axis=1), n[:, 1].sum(axis=1)
    both = (n_ab > 0) & (n_ba > 0)
    pairs = n_ab * n_ba
    same = (n[:, 0] * n[:, 1]).sum(axis=1)
    at = np.flatnonzero(both)
    at = at[np.argsort(first[at], kind="stable")]  # the order of first appearance
    per_judge: dict[str, list[tuple[float, str, int]]] = {}
    for k in at.tolist():
        i = int(first[k])
        per_judge.setdefault(str(judge[i]), []).append((float((pairs[k] - same[k]) / pairs[k]), str(dilemma[i]),
                                                        int(pairs[k])))
    out: dict[str, FlipRate] = {}
    for name, vals in per_judge.items():
        est, iv = bootstrap.cluster_mean([v for v, _, _ in vals], [d for _, d, _ in vals], seed=seed,
                                         replicates=replicates, clip=(0.0, 1.0))
        out[name] = {"flip_rate": est, "flip_ci_low": iv.low, "flip_ci_high": iv.high,
                     "flip_pairs": sum(p for _, _, p in vals), "flip_exchanges": len(vals), "flip_note": iv.note}
    return out


def judgment_counts_of_facts(facts: Facts) -> dict[str, int]:
    """judge_bias.judgment_counts from the columns."""
    judged = facts.judged.astype(bool)
    return {"rounds": len(set(facts.round.tolist())), "judgments": int(judged.sum()),
            "rejudged": int((facts.origin[judged] == "rejudge").sum()), "order_ba": int((facts.order[judged] == "ba").sum())}


def order_counts_of_facts(facts: Facts) -> dict[str, dict[str, int]]:
    """judge_bias.order_counts from the columns."""
    out: dict[str, dict[str, int]] = {}
    judged = np.flatnonzero(facts.judged)
    for judge, order in zip(facts.judge[judged].tolist(), facts.order[judged].tolist(), strict=True):
        out.setdefault(judge, {"ab": 0, "ba": 0})[order] += 1
    return out


def _alpha_rows(values: np.ndarray, unit: np.ndarray, dilemma: np.ndarray, dilemma_names: list[str], seed: int,
                replicates: int) -> tuple[float | None, float | None, float | None, str, int, int, int]:
    """reliability._boot_alpha over records in order: each record's value (NaN: none), unit and dilemma code.
    The units in the order their first value appears, each unit's values summed in record order: the same
    numbers, bit for bit, as the per-record dictionaries of reliability.py. Also n_units (pairable), n_values
    and the units left out."""
    from ebtui.core.analysis.bootstrap import MIN_CLUSTERS, interval
    from ebtui.core.analysis.reliability import alpha_from

    ok = np.isfinite(values)
    v, u = values[ok], unit[ok]
    if not len(v):
        return None, None, None, "fewer than 2 transcripts with 2 or more judgments, or no variation", 0, 0, 0
    keys, first, inv = np.unique(u, return_index=True, return_inverse=True)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(keys))
    idx = rank[inv.reshape(-1)]  # each value's unit, numbered by first appearance
    m = np.bincount(idx, minlength=len(keys)).astype(float)
    s1 = np.bincount(idx, weights=v, minlength=len(keys))
    s2 = np.bincount(idx, weights=v * v, minlength=len(keys))
    pair = m >= 2
    n_units, left_out = int(pair.sum()), int((~pair).sum())
    n_values = int(m[pair].sum())
    ss = np.maximum(s2[pair] - s1[pair] * s1[pair] / m[pair], 0.0)
    stats = np.column_stack([m[pair], s1[pair], s2[pair], m[pair] * ss / (m[pair] - 1)])
    est = alpha_from(stats.sum(axis=0)) if n_units >= 2 else None
    if est is None:
        return (None, None, None, "fewer than 2 transcripts with 2 or more judgments, or no variation", n_units,
                n_values, left_out)
    unit_dil = np.zeros(len(keys), dtype=np.int64)
    unit_dil[idx] = dilemma[ok]
    dil = unit_dil[pair]
    codes = sorted(set(dil.tolist()), key=lambda d: dilemma_names[d])
    G = len(codes)
    if G < MIN_CLUSTERS:
        return est, None, None, f"fewer than {MIN_CLUSTERS} dilemmas", n_units, n_values, left_out
    per_d = np.array([stats[dil == d].sum(axis=0) for d in codes])
    picks = np.random.default_rng(seed).integers(0, G, size=(replicates, G))
    draws = np.array([np.nan if (a := alpha_from(per_d[row].sum(axis=0))) is None else a for row in picks])
    iv = interval(est, draws, G, clip=(-1.0, 1.0))
    return est, iv.low, iv.high, iv.note, n_units, n_values, left_out


def reliability_of_facts(facts: Facts, *, seed: int = bootstrap.DEFAULT_SEED, replicates: int = 200) -> ReliabilityJson:
    """reliability.reliability_json from the columns (parsed scores), without a round or a dictionary per
    record: one record per judged row and team in order, the same numbers (tests/unit/analysis/
    test_bias_source.py)."""
    from itertools import combinations

    from ebtui.core.analysis.reliability import MEAN, alpha_row, reliability_section, retest_row

    judged = np.flatnonzero(facts.judged)
    R = 2 * len(judged)
    sc = facts.parsed[judged].astype(float).reshape(R, NC)  # record = (judgment, team) in order
    sc[sc == 0] = np.nan
    n_ok = np.isfinite(sc).sum(axis=1)
    with np.errstate(invalid="ignore"):
        mean = np.where(n_ok > 0, np.nansum(sc, axis=1) / np.maximum(n_ok, 1), np.nan)
    ex_names, ex_code = facts.codes("exchange")
    unit = np.repeat(ex_code[judged].astype(np.int64) * 2, 2) + np.tile([0, 1], len(judged))
    dil_names, dil_code = facts.codes("dilemma")
    dilemma = np.repeat(dil_code[judged].astype(np.int64), 2)
    alphas: list[AlphaRow] = []
    for c, values in (*((crit, sc[:, k]) for k, crit in enumerate(CRITERIA)), (MEAN, mean)):
        est, lo, hi, note, n_units, n_values, left = _alpha_rows(values, unit, dilemma, list(dil_names), seed,
                                                                 replicates)
        alphas.append(alpha_row(c, (est, lo, hi, note), n_units, n_values, left))
    # test-retest: per judge, its repeats of one transcript in one order (few: a loop over the repeated ones)
    judge_names, jcode = facts.codes("judge")
    judge = np.repeat(jcode[judged].astype(np.int64), 2)
    ba = np.repeat((facts.order[judged] == "ba").astype(np.int64), 2)
    order_name = ("ab", "ba")
    U = int(unit.max()) + 1 if R else 1
    _, g_first, g_inv, g_n = np.unique((judge * U + unit) * 2 + ba, return_index=True, return_inverse=True,
                                       return_counts=True)
    g_inv = g_inv.reshape(-1)
    repeated = g_n[g_inv] >= 2  # the records of a (judge, unit, order) group with repeats
    _, ju_n = np.unique(judge * U + unit, return_counts=True)
    crossed_judges = set(np.unique((np.unique(judge * U + unit)[ju_n >= 2]) // U).tolist())
    retest: list[RetestRow] = []
    for name in sorted(set(judge_names[c] for c in np.unique(judge).tolist())):
        code = judge_names.index(name)
        rs_all = np.flatnonzero(repeated & (judge == code))
        groups: dict[int, list[int]] = {}
        for r in rs_all[np.argsort(g_first[g_inv[rs_all]], kind="stable")].tolist():  # groups by first record
            groups.setdefault(int(g_inv[r]), []).append(r)
        diffs: list[float] = []
        units_m: dict[tuple[int, str], list[float]] = {}
        dil_of: dict[tuple[int, str], str] = {}
        for rs in groups.values():
            rs.sort()
            key = (int(unit[rs[0]]), order_name[int(ba[rs[0]])])
            units_m[key] = [float(mean[r]) for r in rs if np.isfinite(mean[r])]
            dil_of[key] = str(dil_names[dilemma[rs[0]]])
            for r1, r2 in combinations(rs, 2):
                both = np.isfinite(sc[r1]) & np.isfinite(sc[r2])
                diffs += np.abs(sc[r1][both] - sc[r2][both]).tolist()
        retest.append(retest_row(name, units_m, dil_of, diffs, len(groups), crossed=code in crossed_judges,
                                 seed=seed, replicates=replicates))
    return reliability_section(alphas, retest, sc)


def preferences_of_facts(facts: Facts, family_of: Callable[[str], str], *, effective: bool = False,
                         seed: int = bootstrap.DEFAULT_SEED,
                         replicates: int = bootstrap.DEFAULT_REPLICATES) -> list[PreferenceRow]:
    """The self-preference and the same-family preference of the report's section 2: judge_bias.preference_rows
    of the fit with the joint fit's terms (model, seat, judge, self, family, criterion, dilemma; no style),
    over the columns in either view — n the (judge, model) pairs each rests on, intervals with the judge x
    model variance, blank with the reason below judge_bias.MIN_PAIRS pairs."""
    from ebtui.core.analysis.judge_bias import fit_table, preference_rows

    bf = fit_table(long_table_of_facts(facts, family_of, effective=effective), seed=seed, replicates=replicates,
                   style=False)
    return preference_rows(bf) if bf is not None else []


def judge_bias_section_of_facts(facts: Facts, *, families: Mapping[str, str] | None = None,
                                agreement: AgreementMap | None = None, seed: int = bootstrap.DEFAULT_SEED,
                                replicates: int = bootstrap.DEFAULT_REPLICATES) -> BiasSection:
    """bias_report.judge_bias_section over the columns (the judges' parsed scores, overrides not applied):
    the section of the rounds they were read from, computed from the columns' arrays (no round records)."""
    from ebtui.core.analysis.bias_report import RELIABILITY_REPLICATES
    from ebtui.core.analysis.judge_bias import bias_json_of_fit, fit_table
    from ebtui.core.families import family_function

    t = long_table_of_facts(facts, family_function(families), agreement=agreement)
    out = bias_json_of_fit(fit_table(t, seed=seed, replicates=replicates),
                           flip_rates_of_facts(facts, seed=seed, replicates=replicates), order_counts_of_facts(facts))
    return {**out, "reliability": reliability_of_facts(facts, seed=seed,
                                                       replicates=min(replicates, RELIABILITY_REPLICATES)),
            "judgments": judgment_counts_of_facts(facts)}


# ---- a cache beside the columns ---------------------------------------------------------------------------

#: the modules whose code the section's numbers come from: a change to any of them is a new cache key
_CODE = ("bias_source", "judge_bias", "judge_model", "bias_table", "identify", "reliability", "bias_report",
         "bootstrap", "fit", "frame")


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


#: above this many judgments the judge-bias section is fitted on a seeded sample of whole rounds, and the report
#: names the sample: a guard on memory, which grows with the scores (about 280 MB at 130,000 judgments, 1.8
#: million scores; 1.6 s of CPU)
BIAS_JUDGMENTS_UP_TO = 250_000
SAMPLE_SEED = 20261129


def bias_sample(facts: Facts, *, up_to: int | None = None) -> tuple[Facts, str | None]:
    """The rows the judge-bias section is fitted on: every row while the judgments are at most `up_to`, else a
    seeded random sample of whole rounds (every judgment of a round drawn, none of one not drawn) holding at
    most `up_to` (default BIAS_JUDGMENTS_UP_TO) judgments, with the sentence the report names it by (None: no sample)."""
    up_to = BIAS_JUDGMENTS_UP_TO if up_to is None else up_to
    n = int(facts.judged.sum())
    if n <= up_to:
        return facts, None
    rounds, inv = np.unique(facts.round, return_inverse=True)
    per_round = np.bincount(inv, weights=facts.judged.astype(float), minlength=len(rounds))
    order = np.random.default_rng(SAMPLE_SEED).permutation(len(rounds))
    keep_n = int(np.searchsorted(np.cumsum(per_round[order]), up_to, side="right"))
    chosen = np.zeros(len(rounds), dtype=bool)
    chosen[order[:keep_n]] = True
    sample = facts.take(np.flatnonzero(chosen[inv]))
    k = int(sample.judged.sum())
    return sample, (f"fitted on a seeded random sample of whole rounds: {k:,} of {n:,} judgments ({keep_n:,} of "
                    f"{len(rounds):,} rounds); its intervals are the sample's (above {up_to:,} judgments the fit's "
                    "memory grows past a gigabyte). Every other section uses every judgment.")


#: the judge-bias sections kept beside the columns (`cached_section`): the file, and the newest entries kept
SECTION_FILE = "bias_section.json"
SECTION_ENTRIES = 4


def cached_section(folder: Path | None, facts: Facts, *, families: Mapping[str, str] | None = None,
                   agreement: AgreementMap | None = None, seed: int = bootstrap.DEFAULT_SEED,
                   replicates: int = bootstrap.DEFAULT_REPLICATES, key: str | None = None) -> BiasSection:
    """`judge_bias_section_of_facts`, kept in `folder`/SECTION_FILE (the store's columns folder; the newest
    SECTION_ENTRIES) under `section_key` (`key`: that key, computed already): a report whose rows, families,
    agreement, seed and code are unchanged reads it back instead of refitting (the section costs seconds from
    10,000 judgments on). folder None, or not writable: computed every time."""
    if key is None:
        key = section_key(facts, families=families, agreement=agreement, seed=seed, replicates=replicates)
    path = folder / SECTION_FILE if folder is not None else None
    held = read_entries(path) if path is not None else []
    for k, got in held:
        if k == key and isinstance(got, dict):
            section: BiasSection = got  # type: ignore[assignment]
            return section
    found, ahead = taken(SECTION_FILE, key)  # (computed ahead by a fork of a cold report: analysis.ahead)
    made: BiasSection = ahead if found else judge_bias_section_of_facts(facts, families=families,
                                                                        agreement=agreement, seed=seed,
                                                                        replicates=replicates)
    section = made
    if path is not None:
        # the newest few (a report of every round and one of a model or a dilemma do not evict each other)
        keep_newest(path, held, key, section, SECTION_ENTRIES)
    return section


#: the self and same-family preferences kept beside the columns (`cached_preferences`): the newest entries
PREFERENCES_FILE = "preferences.json"
PREFERENCES_ENTRIES = 8


def preferences_key(facts: Facts, *, families: Mapping[str, str] | None, effective: bool, seed: int,
                    replicates: int) -> str:
    """A hash of everything `preferences_of_facts` reads: the columns it uses (the view's scores), the
    families, seed, replicates, the view and the code of the modules it runs (_CODE, and the family rule)."""
    import hashlib
    import importlib

    h = hashlib.sha256()
    for mod in (*(f"ebtui.core.analysis.{m}" for m in _CODE), "ebtui.core.families"):
        path = getattr(importlib.import_module(mod), "__file__", None)
        if path:
            with open(path, "rb") as fh:
                h.update(fh.read())
    for name in ("round", "exchange", "dilemma", "team_a", "team_b", "judge", "order"):
        h.update("\x1f".join(map(str, getattr(facts, name).tolist())).encode("utf-8", "surrogatepass") + b"\x1e")
    for arr in (facts.judged, facts.own_missing, facts.scores(effective), facts.style):
        h.update(np.ascontiguousarray(arr).tobytes() + b"\x1e")
    h.update(repr(sorted((families or {}).items())).encode())
    h.update(f"{effective}|{seed}|{replicates}".encode())
    return h.hexdigest()


def cached_preferences(folder: Path | None, facts: Facts, *, families: Mapping[str, str] | None,
                       effective: bool = False, seed: int = bootstrap.DEFAULT_SEED,
                       replicates: int = bootstrap.DEFAULT_REPLICATES) -> list[PreferenceRow]:
    """`preferences_of_facts` (with the families' rule), kept in `folder`/PREFERENCES_FILE under
    `preferences_key`: an unchanged report reads the rows back (the fit costs most of a second of CPU at
    100,000 rounds) — each float as JSON wrote it, so the same bits. folder None, or not writable: computed
    every time."""
    from ebtui.core.families import family_function

    if folder is None:
        return preferences_of_facts(facts, family_function(families), effective=effective, seed=seed,
                                    replicates=replicates)
    key = preferences_key(facts, families=families, effective=effective, seed=seed, replicates=replicates)
    path = folder / PREFERENCES_FILE
    held = read_entries(path)
    for k, rows in held:
        if k == key and isinstance(rows, list):
            got: list[PreferenceRow] = rows
            return got
    found, ahead = taken(PREFERENCES_FILE, key)  # (computed ahead by a fork of a cold report: analysis.ahead)
    made: list[PreferenceRow] = ahead if found else preferences_of_facts(
        facts, family_function(families), effective=effective, seed=seed, replicates=replicates)
    keep_newest(path, held, key, made, PREFERENCES_ENTRIES)
    return made
