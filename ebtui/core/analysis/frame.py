"""The analyses' input in columns: each judgment's facts (`judgment_facts`, a pure function of the round's
file), the per-judgment columns (`Facts`), and the joint fit's long table (`ScoreFrame`: judgment x seat x
criterion). Only what the analyses read, so a report never re-reads a transcript; see docs/STORE.md."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from ebtui.core.analysis.text_facts import framework_facts as _fw
from ebtui.core.analysis.text_facts import literal_prefix as literal_prefix
from ebtui.core.analysis.text_facts import style_counts as style_counts
from ebtui.core.analysis.text_facts import team_style
from ebtui.core.facts import exchange_key
from ebtui.core.liveness import interrupted
from ebtui.core.records import CRITERIA, Judgment, Phase, PhaseStatus, Round, RoundStatus
from ebtui.core.review import needs_review

#: bump when `round_facts` changes what it records (a cache of another version is rebuilt)
FACTS_VERSION = 2
NC = len(CRITERIA)
#: the per-row scalar columns, in the order the Parquet file stores them: `id` is the round's id for its own
#: judgment (or a round without one) and "<round id>#<judgment key>" for a judgment added later (the ids
#: expand_judgments gives); `round` the round's id; `key` the judgment's key ("" for the round's own)
STR_COLUMNS = ("id", "exchange", "dilemma", "title", "team_a", "team_b", "judge", "tournament", "status",
               "round", "key", "origin", "order")


#: the texts whose facts are kept, in column order: the four debate answers, then the judge's remarks per team
SLOTS = ("presentation", "response", "rebuttal", "consistency_test", "just_a", "just_b")
#: an override in force as the facts keep it: team, criterion, the judge's score, the override's, its note
OverrideRow = tuple[str, str, int | None, int | None, str]


class RoundFacts(TypedDict):
    """What one round contributes to the analyses (`round_facts`); the JSON columns are JSON text or None."""

    id: str
    exchange: str
    dilemma: str
    title: str
    team_a: str
    team_b: str
    judge: str
    tournament: str
    status: str
    writer: list[object] | None
    ts: float
    timestamp: str
    judged: bool
    needs_review: bool
    parsed: list[list[int]] | None
    effective: list[list[int]] | None
    text_len: list[int]
    reused: list[bool]
    fw_bits: list[int]
    cls: str | None
    quotes: str | None
    overrides: str | None
    families: str | None
    imported: str | None
    round: str
    key: str
    origin: str  # "round", "rejudge"; "" without a judgment
    order: str  # "ab" or "ba" (the judge read Team B's material first)
    own_missing: bool  # the round's own judgment is missing (failed or not yet made)
    style: list[int]  # words and formatting elements of Team A's own text, then of Team B's (style.py)


class ImportedFacts(TypedDict):
    """The provenance of an imported round as the facts keep it (`Facts.imported_of`)."""

    runner: str
    run: str
    file: str
    defaulted: int
    disagreements: int


def _scores(j: Judgment | None) -> tuple[bool, list[list[int]] | None, list[list[int]] | None]:
    """(needs review, parsed, effective scores with 0 for missing) of a judgment: what review.needs_review,
    Judgment.parsed_scores and effective_scores give, without building Scores — and without the checklist
    where it can only be the missing scores, none addressed (no checklist or flag given, no override)."""
    if j is None:
        return False, None, None
    parsed = [[getattr(sc, c) for c in CRITERIA] for sc in (j.team_a_scores, j.team_b_scores)]
    effective = [list(row) for row in parsed]
    for (team, crit), ov in j.active_overrides().items():
        effective[0 if team == "a" else 1][_CRIT_AT[crit]] = ov.value
    if not j.review_items and not j.needs_review and not j.overrides:
        review = any(v is None for row in parsed for v in row)
    else:
        review = needs_review(j)
    return review, [[v or 0 for v in row] for row in parsed], [[v or 0 for v in row] for row in effective]


_CRIT_AT = {c: k for k, c in enumerate(CRITERIA)}


def _team_style(r: Round, team: str, parts: list[str]) -> tuple[int, int]:
    """style_counts(style.team_text(r, team)), from the team's answers `parts` (tests compare the two)."""
    return team_style(parts)


def round_facts(r: Round) -> RoundFacts:
    """The facts of a round's first row (its own judgment; `judgment_facts` gives every judgment's)."""
    return judgment_facts(r)[0]


_dumps = json.JSONEncoder(ensure_ascii=False).encode  #: json.dumps(v, ensure_ascii=False)'s own encoder, made once


def judgment_facts(r: Round) -> list[RoundFacts]:
    """Everything the analyses read from one round, one small JSON-able dict per judgment (no transcript text):
    the rows `round_facts` gave for each round of expand_judgments([r]) — the transcript's facts computed once.
    A round whose own judgment is missing gives a row for it only when no judgment was added later."""
    from ebtui.core.analysis.consistency_rules import TEAM_PHASES, classify_consistency

    text_len = [-1] * len(SLOTS)
    reused = [False] * 4
    fw_bits = [0] * len(SLOTS)
    quotes: dict[str, dict[str, str]] = {}
    cls: tuple[str, list[str], list[str]] | None = None
    first: dict[object, Phase] = {}  # phase type -> its first phase (Round.phase's)
    for ph in r.phases:
        first.setdefault(ph.phase_type, ph)
    parts: dict[str, list[str]] = {"a": [], "b": []}  # each team's answers (style.team_text's parts)
    for k, (phase, seat) in enumerate(TEAM_PHASES):
        p = first.get(phase)
        if p is None or p.status != PhaseStatus.COMPLETE or not p.response:
            continue
        parts[seat].append(p.response)
        text_len[k], reused[k] = len(p.response), bool(p.reused_from)
        fw_bits[k], q = _fw(p.response)
        if q:
            quotes[SLOTS[k]] = q
        if phase.value == "consistency_test":
            c = classify_consistency(p.response)
            cls = (c.label, c.cues, c.evidence)
    imp = r.imported
    imported: ImportedFacts | None = None if imp is None else {
        "runner": imp.runner, "run": imp.source_run, "file": imp.source_file,
        "defaulted": len(imp.defaulted), "disagreements": len(imp.disagreements)}
    style = [v for team in ("a", "b") for v in _team_style(r, team, parts[team])]
    # (an expanded round's id already names its judgment: its round is the part before "#")
    round_id = r.id.split("#", 1)[0]
    shared = {
        "exchange": exchange_key(r), "dilemma": r.dilemma_id, "title": r.dilemma_title,
        "team_a": r.team_a_model, "team_b": r.team_b_model,
        "tournament": r.tournament_id or "", "status": str(r.status),
        "writer": r.settings.writer if r.status == RoundStatus.RUNNING else None,
        "ts": r.timestamp.timestamp(), "timestamp": str(r.timestamp),
        "cls": _dumps(cls) if cls else None,
        "families": _dumps(dict(r.settings.families)) if r.settings.families else None,
        "imported": None if imported is None else _dumps(imported),
        "round": round_id, "own_missing": r.judgment is None, "style": style,
    }
    own: list[tuple[str, str, Judgment | None]] = [(r.id, r.judge_model, r.judgment)] \
        if r.judgment is not None or not r.extra_judgments else []
    extra = [(f"{r.id}#{j.key}", j.judge_model or r.judge_model, j) for j in r.extra_judgments]
    out: list[RoundFacts] = []
    for rid, judge, j in own + extra:
        t_len, bits = list(text_len), list(fw_bits)
        q_all = dict(quotes)
        overrides: list[OverrideRow] = []
        if j is not None:
            for k, text in ((4, j.team_a_justification), (5, j.team_b_justification)):
                if text.strip():
                    t_len[k] = len(text)
                    bits[k], q = _fw(text)
                    if q:
                        q_all[SLOTS[k]] = q
            for (team, crit), ov in sorted(j.active_overrides().items()):
                overrides.append((team, crit, ov.parsed_value, ov.value, ov.note))
        review, parsed, effective = _scores(j)
        rec: RoundFacts = {
            **shared,  # type: ignore[typeddict-item]
            "id": rid, "judge": judge,
            "judged": j is not None,
            "needs_review": review, "parsed": parsed, "effective": effective,
            "text_len": t_len, "reused": list(reused), "fw_bits": bits,
            "quotes": _dumps(q_all) if q_all else None,
            "overrides": _dumps(overrides) if overrides else None,
            "key": j.key if j is not None else "", "origin": j.origin if j is not None else "",
            "order": j.order if j is not None else "ab",
        }
        out.append(rec)
    return out


#: the optional per-round JSON columns (None where empty)
JSON_COLUMNS = ("cls", "quotes", "overrides", "families", "imported")


def _loads(value: str | None, empty: object) -> Any:
    """A JSON column's value (json.loads is untyped: the callers name what `round_facts` wrote there)."""
    return json.loads(value) if value else empty


@dataclass
class Facts:
    """Per-judgment columns for many rounds (row i is one judgment of a round, or a round without any; rows in
    the order the rounds were given, a round's own judgment first)."""

    id: np.ndarray  # object arrays of str
    exchange: np.ndarray
    dilemma: np.ndarray
    title: np.ndarray
    team_a: np.ndarray
    team_b: np.ndarray
    judge: np.ndarray
    tournament: np.ndarray
    status: np.ndarray  # as readers see it (a running round whose writer is gone: incomplete)
    ts: np.ndarray  # float seconds
    timestamp: np.ndarray  # str, for "newest wins" orderings
    judged: np.ndarray  # bool
    needs_review: np.ndarray  # bool
    parsed: np.ndarray  # int8 [R, 2, 7]; 0 = missing
    effective: np.ndarray  # int8 [R, 2, 7]
    text_len: np.ndarray  # int32 [R, 6] (SLOTS): characters of each completed answer / remark; -1 none
    reused: np.ndarray  # bool [R, 4]: the debate answer was copied from another round of the panel
    fw_bits: np.ndarray  # int16 [R, 6]: frameworks mentioned (bit k: FRAMEWORKS[k])
    cls: np.ndarray  # object [R]: JSON [label, cues, evidence] of the consistency answer (rules), or None
    overrides: np.ndarray  # object [R]: JSON [[team, criterion, parsed, value, note], ...] in force, or None
    families: np.ndarray  # object [R]: JSON {model: family} recorded when played, or None
    imported: np.ndarray  # object [R]: JSON provenance summary of an imported round, or None
    round: np.ndarray  # object [R]: the round's id (several rows: its judgments)
    key: np.ndarray  # object [R]: the judgment's key ("" for the round's own)
    origin: np.ndarray  # object [R]: "round", "rejudge" ("" without a judgment)
    order: np.ndarray  # object [R]: "ab" or "ba", the order the judge read the teams in
    own_missing: np.ndarray  # bool [R]: the round's own judgment is missing
    style: np.ndarray  # int32 [R, 4]: words, formatting elements of Team A's own text, then Team B's
    #: rows -> each row's JSON {slot: {framework: first matching sentence}} (read only where quoted)
    quotes_of: Callable[[np.ndarray], list[str | None]] = field(repr=False, default=lambda rows: [])
    _codes: dict[str, tuple[list[str], np.ndarray]] = field(repr=False, default_factory=dict)
    _classes: dict[int, tuple[str, str, str]] = field(repr=False, default_factory=dict)

    def codes(self, name: str) -> tuple[list[str], np.ndarray]:
        """A string column's sorted distinct values and each row's index among them (computed once);
        name "seat_model": team_a then team_b, 2 x rows."""
        if name not in self._codes:
            values = np.concatenate([self.team_a, self.team_b]) if name == "seat_model" else getattr(self, name)
            self._codes[name] = levels(values) if len(values) else ([], np.zeros(0, dtype=np.int64))
        return self._codes[name]

    def __len__(self) -> int:
        return len(self.id)

    def scores(self, effective: bool) -> np.ndarray:
        return self.effective if effective else self.parsed

    def quotes(self, rows: Sequence[int]) -> dict[int, dict[str, dict[str, str]]]:
        idx = np.asarray(list(rows), dtype=np.int64)
        return {int(i): _loads(q, {}) for i, q in zip(idx.tolist(), self.quotes_of(idx), strict=True)}

    def consistency_class(self, i: int) -> tuple[str, str, str]:
        """Row i's consistency answer as the rules classed it: (label, cues joined, evidence quoted) —
        parsed once per Facts."""
        if i not in self._classes:
            label, cues, evidence = json.loads(self.cls[i])
            self._classes[i] = (label, ", ".join(dict.fromkeys(cues)), " … ".join(f"“{s}”" for s in evidence[:2]))
        return self._classes[i]

    def override_rows(self, i: int) -> list[OverrideRow]:
        return [(team, crit, parsed, value, note) for team, crit, parsed, value, note in _loads(self.overrides[i], [])]

    def imported_of(self, i: int) -> dict[str, Any] | None:
        """Row i's ImportedFacts (typed as the dict columnar.provenance_summary collects them in)."""
        got: dict[str, Any] | None = _loads(self.imported[i], None)
        return got

    def families_of(self, i: int) -> dict[str, str]:
        got: dict[str, str] = _loads(self.families[i], {})
        return got

    @classmethod
    def from_records(cls, records: Sequence[RoundFacts]) -> Facts:
        n = len(records)
        fields: Sequence[Mapping[str, object]] = records

        def col(key: str) -> np.ndarray:
            out = np.empty(n, dtype=object)
            out[:] = [rec[key] for rec in fields]
            return out

        parsed = np.zeros((n, 2, NC), dtype=np.int8)
        eff = np.zeros((n, 2, NC), dtype=np.int8)
        for i, rec in enumerate(records):
            if rec["parsed"] is not None and rec["effective"] is not None:  # (round_facts sets both or neither)
                parsed[i] = rec["parsed"]
                eff[i] = rec["effective"]
        status = col("status")
        for i, rec in enumerate(records):
            if interrupted(str(rec["status"]), rec.get("writer")):
                status[i] = RoundStatus.INCOMPLETE.value
        quotes = col("quotes")
        return cls(
            id=col("id"), exchange=col("exchange"), dilemma=col("dilemma"), title=col("title"),
            team_a=col("team_a"), team_b=col("team_b"), judge=col("judge"), tournament=col("tournament"),
            status=status, ts=np.array([float(rec["ts"]) for rec in records], dtype=float),
            timestamp=col("timestamp"),
            judged=np.array([bool(rec["judged"]) for rec in records], dtype=bool),
            needs_review=np.array([bool(rec["needs_review"]) for rec in records], dtype=bool),
            parsed=parsed, effective=eff,
            text_len=np.array([rec["text_len"] for rec in records], dtype=np.int32).reshape(n, len(SLOTS)),
            reused=np.array([rec["reused"] for rec in records], dtype=bool).reshape(n, 4),
            fw_bits=np.array([rec["fw_bits"] for rec in records], dtype=np.int16).reshape(n, len(SLOTS)),
            cls=col("cls"), overrides=col("overrides"), families=col("families"), imported=col("imported"),
            round=col("round"), key=col("key"), origin=col("origin"), order=col("order"),
            own_missing=np.array([bool(rec["own_missing"]) for rec in records], dtype=bool),
            style=np.array([rec["style"] for rec in records], dtype=np.int32).reshape(n, 4),
            quotes_of=lambda rows: [quotes[i] for i in rows.tolist()],
        )

    @classmethod
    def from_rounds(cls, rounds: Iterable[Round]) -> Facts:
        """Every judgment of these rounds (rounds expand_judgments already expanded stay as they are)."""
        return cls.from_records([rec for r in rounds for rec in judgment_facts(r)])

    def take(self, rows: np.ndarray) -> Facts:
        """The facts of some rounds (row indices or a boolean mask)."""
        idx = np.flatnonzero(rows) if rows.dtype == bool else rows.astype(np.int64)
        arrays = {k: getattr(self, k)[idx] for k in ARRAY_FIELDS}
        parent = self.quotes_of
        return Facts(**arrays, quotes_of=lambda r: parent(idx[r]))

    def models(self) -> list[str]:
        """Every model that sat at a team seat (sorted)."""
        return sorted(set(self.team_a.tolist()) | set(self.team_b.tolist()))

    def names(self) -> set[str]:
        return set(self.team_a.tolist()) | set(self.team_b.tolist()) | set(self.judge.tolist())


ARRAY_FIELDS = (*STR_COLUMNS, "ts", "timestamp", "judged", "needs_review", "parsed", "effective", "text_len",
                "reused", "fw_bits", *[c for c in JSON_COLUMNS if c != "quotes"], "own_missing", "style")


def levels(values: np.ndarray | Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Sorted distinct names and each value's index among them (np.unique's, of the values as numpy text): a few
    repeated names hashed, the distinct ones sorted (Python's str order is numpy's); else numpy's way (many
    distinct values, as exchange ids; a trailing NUL, which numpy text drops)."""
    vals = values.tolist() if isinstance(values, np.ndarray) else list(values)
    if vals and len(set(vals[:4096])) <= 256 and set(map(type, vals)) == {str}:
        names = sorted(dict.fromkeys(vals))
        if not any(n.endswith("\x00") for n in names):
            rank = dict(zip(names, range(len(names)), strict=True))
            return names, np.fromiter(map(rank.__getitem__, vals), dtype=np.int64, count=len(vals))
    uniq, inv = np.unique(np.asarray(values).astype(str), return_inverse=True)
    return [str(n) for n in uniq], inv.reshape(-1).astype(np.int64)


def used_codes(coded: tuple[list[str], np.ndarray], rows: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The sorted names a column's rows `rows` use and each row's index among them."""
    if not len(rows):
        return [], np.zeros(0, dtype=np.int64)
    names, code = coded
    c = code[rows]  # (np.unique's names and inverse without a sort: the codes that occur, each row's rank)
    present = np.bincount(c, minlength=len(names)) > 0
    return [names[u] for u in np.flatnonzero(present).tolist()], (np.cumsum(present) - 1)[c].astype(np.int64)


@dataclass
class ScoreFrame:
    """The long table the joint fit reads: one row per score given (round x seat x criterion), in columns."""

    y: np.ndarray  # float scores
    round_idx: np.ndarray  # row of Facts the score came from
    model_idx: np.ndarray
    judge_idx: np.ndarray
    dilemma_idx: np.ndarray
    crit_idx: np.ndarray
    seat: np.ndarray  # +1 Team A, -1 Team B
    family: np.ndarray  # 1.0 when the judge is of the scored model's family
    models: list[str]
    judges: list[str]
    dilemmas: list[str]
    criteria: list[str]

    def __len__(self) -> int:
        return len(self.y)

    @classmethod
    def build(cls, facts: Facts, family_of: Callable[[str], str], *, effective: bool = False) -> ScoreFrame:
        """Every score given, in the order the old row-by-row table had them (round, seat, criterion)."""
        s = facts.scores(effective)  # [R, 2, 7]
        present = s > 0
        r_idx, seat_i, c_idx = (x.astype(np.int64) for x in np.nonzero(present))  # round, seat, criterion
        y = s[r_idx, seat_i, c_idx].astype(float)
        # level codes per round first (few), then per score (many): no string work per score
        models, mi = used_codes(facts.codes("seat_model"), np.where(seat_i == 0, r_idx, r_idx + len(facts)))
        judges, ji = used_codes(facts.codes("judge"), r_idx)
        dilemmas, di = used_codes(facts.codes("dilemma"), r_idx)
        used = sorted(np.unique(c_idx).tolist(), key=lambda c: CRITERIA[c])  # levels sorted by name, as ever
        criteria = [CRITERIA[c] for c in used]
        pos = np.full(NC, -1, dtype=np.int64)
        pos[used] = np.arange(len(used))
        fam_of = {n: family_of(n) for n in set(models) | set(judges)}
        same = np.array([[fam_of[m] == fam_of[j] for j in judges] for m in models], dtype=bool) \
            if models and judges else np.zeros((0, 0), dtype=bool)
        family = same[mi, ji].astype(float) if len(r_idx) else np.zeros(0)
        return cls(y, r_idx.astype(np.int64), mi, ji, di, pos[c_idx], np.where(seat_i == 0, 1.0, -1.0),
                   family, models, judges, dilemmas, criteria)

    def take(self, rows: np.ndarray) -> ScoreFrame:
        """Some rows, keeping only the levels they use (indices renumbered)."""
        def relevel(idx: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str]]:
            used, inv = np.unique(idx, return_inverse=True)
            return inv.astype(np.int64), [names[u] for u in used]

        mi, models = relevel(self.model_idx[rows], self.models)
        ji, judges = relevel(self.judge_idx[rows], self.judges)
        di, dilemmas = relevel(self.dilemma_idx[rows], self.dilemmas)
        ci, criteria = relevel(self.crit_idx[rows], self.criteria)
        return ScoreFrame(self.y[rows], self.round_idx[rows], mi, ji, di, ci, self.seat[rows], self.family[rows],
                          models, judges, dilemmas, criteria)
