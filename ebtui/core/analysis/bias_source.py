"""The judge-bias section from the analysis columns (one row per judgment, with each team's words and
formatting elements and each judgment's reading order and origin), at any store size without reading a
transcript: the fit's long table (`long_table_of_facts`), the section itself (`judge_bias_section_of_facts`,
through `stand_in_rounds` until the judge-bias functions take a long table), and a cache of it beside the
columns (`cached_section`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ebtui.core.analysis import bootstrap
from ebtui.core.analysis.frame import NC, Facts, used_codes
from ebtui.core.records import CRITERIA

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ebtui.core.analysis.bias_types import BiasSection, PreferenceRow
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
    the section of the rounds they were read from. The fit takes the columns' long table directly; the
    reliability panel still reads stand-in rounds (`stand_in_rounds`)."""
    from ebtui.core.analysis.bias_report import RELIABILITY_REPLICATES
    from ebtui.core.analysis.judge_bias import bias_json_of_fit, fit_table, flip_rows
    from ebtui.core.analysis.reliability import reliability_json
    from ebtui.core.families import family_function

    t = long_table_of_facts(facts, family_function(families), agreement=agreement)
    out = bias_json_of_fit(fit_table(t, seed=seed, replicates=replicates),
                           flip_rows(_winners(facts), seed=seed, replicates=replicates), order_counts_of_facts(facts))
    return {**out, "reliability": reliability_json(stand_in_rounds(facts), seed=seed, replicates=min(replicates, RELIABILITY_REPLICATES)),
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


#: above this many judgments the judge-bias section is fitted on a seeded sample of whole rounds (its design
#: is dense: at 100,000 rounds the full fit needed about 13 GB), and the report names the sample
BIAS_JUDGMENTS_UP_TO = 10_000
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
                    "dense design needs gigabytes of memory). Every other section uses every judgment.")


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
