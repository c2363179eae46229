"""Import rounds played by the public Ethics Bowl runner (moral_reasoning_quality_evaluation): its round
`.json` files and `all_rounds.jsonl` become ebtui rounds, the judge's reply re-read by ebtui's parser, the
runner's recorded scores kept as parsed (a score it could not read becomes missing), the dilemma taken from
the loaded document or rebuilt from the prompts. Round ids are deterministic, so importing again adds nothing.
What each field becomes: docs/IMPORT.md.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import JsonValue

from ebtui.core.importers.eb_source import (
    RUNNER,
    ImportProblem,
    SourceRecord,
    content_hash,
    dilemma_from_prompts,
    iter_sources,
    latest_saves,
    read_sources,
    source_run,
)
from ebtui.core.importers.provenance import (
    ProvenanceSummary,
    provenance_lines,
    provenance_summary,
    summary_lines,
)
from ebtui.core.overrides import describe_target
from ebtui.core.records import (
    CRITERIA,
    Dilemma,
    Imported,
    Judgment,
    Phase,
    PhaseStatus,
    PhaseType,
    ReviewReason,
    Round,
    RoundStatus,
    Scores,
    ScoreSource,
    Team,
    Tournament,
    TournamentStatus,
)
from ebtui.providers.base import Usage

if TYPE_CHECKING:
    from ebtui.core.store import ResultsStore

__all__ = [
    "RUNNER",
    "EBImportError",
    "ImportProblem",
    "ImportResult",
    "ImportedRound",
    "ProvenanceSummary",
    "SourceRecord",
    "convert_round",
    "defaulted_scores",
    "dilemma_from_prompts",
    "import_rounds",
    "imported_round_id",
    "provenance_lines",
    "provenance_summary",
    "read_sources",
    "runner_criteria_table",
    "summary_lines",
]


_PHASES: dict[str, PhaseType] = {
    "presentation": PhaseType.PRESENTATION,
    "response": PhaseType.RESPONSE,
    "rebuttal": PhaseType.REBUTTAL,
    "consistency_test": PhaseType.CONSISTENCY_TEST,
    "judgment": PhaseType.JUDGMENT,
}
_TEAMS: dict[str, Team] = {"A": "a", "B": "b"}
# the runner's two messages for a score it filled with 5 (judgment_parser.py)
_DEFAULTED = (
    re.compile(r"could not parse\s+(?P<crit>[a-z_]+)\s+for\s+team\s+(?P<team>[ab])\b", re.I),
    re.compile(r"invalid score format for\s+(?P<crit>[a-z_]+)\s+in\s+team\s+(?P<team>[ab])\b", re.I),
)
_NO_TEXT = {"no justification provided", "no overall analysis provided"}
_REQUIRED = ("id", "dilemma_id", "team_a_model", "team_b_model", "judge_model")


class EBImportError(ValueError):
    """A record that cannot be read as one of that runner's rounds; str() says what is wrong."""


@dataclass(frozen=True)
class ImportedRound:
    """What an import says of one round it saved (the round itself is in the store)."""

    id: str
    source_round_id: str | None
    source: str  # file, or file:line
    needs_review: bool
    defaulted: int  # scores the runner could not read and filled with 5 (imported as missing)
    disagreements: int  # scores ebtui's parser reads differently from the runner (the runner's value kept)


@dataclass
class ImportResult:
    #: the rounds saved, whole (only with `import_rounds(..., keep_rounds=True)`, the default)
    imported: list[Round] = field(default_factory=list)
    #: one line of facts per round saved (always: a few hundred bytes each, whatever the rounds' size)
    saved: list[ImportedRound] = field(default_factory=list)
    #: (round id, where) of rounds the store already held (a second import adds nothing)
    already: list[tuple[str, str]] = field(default_factory=list)
    #: (round id, where) of records read twice in this import (e.g. both a .json and the .jsonl)
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    tournament: Tournament | None = None  # the one --tournament named
    #: every tournament that received rounds (one per run with per_run)
    tournaments: list[Tournament] = field(default_factory=list)
    #: where records were passed over because a later save of the same runner round was read
    superseded: list[str] = field(default_factory=list)
    #: rounds already in the store, without a tournament, now put in the one given
    grouped: list[str] = field(default_factory=list)
    #: (round id, its tournament) of rounds already in the store under another tournament (left there)
    elsewhere: list[tuple[str, str]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.problems)


# --------------------------------------------------------------------------------------------- ids


def imported_round_id(data: dict[str, JsonValue]) -> str:
    """"eb-<first 8 of the runner's id>-<12 hex of a hash of the runner's id and the record>"."""
    source = str(data.get("id", ""))
    digest = hashlib.sha256(f"{source}\n{content_hash(data)}".encode()).hexdigest()[:12]
    prefix = re.sub(r"[^A-Za-z0-9]+", "", source)[:8] or "x"
    return f"eb-{prefix}-{digest}"


# --------------------------------------------------------------------------------------------- converting


def _when(value: object, where: str, name: str) -> datetime | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise EBImportError(f"{name} is not a date-time ({value!r})")
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise EBImportError(f"{name} is not a date-time ({value!r})") from None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt  # the runner writes naive UTC (utcnow)


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _str(data: dict[str, JsonValue], key: str) -> str:
    v = data.get(key)
    if not isinstance(v, str) or not v.strip():
        raise EBImportError(f"missing or empty {key!r}" if v in (None, "") else f"{key!r} is not text ({v!r})")
    return v


def defaulted_scores(parse_errors: Iterable[object]) -> tuple[set[tuple[Team, str]], list[str]]:
    """(team, criterion) pairs the runner filled with 5, and the parse_errors lines that say something else."""
    found: set[tuple[Team, str]] = set()
    other: list[str] = []
    for line in parse_errors or []:
        text = str(line)
        for rx in _DEFAULTED:
            m = rx.search(text)
            if m and m.group("crit").lower() in CRITERIA:
                found.add((_TEAMS[m.group("team").upper()], m.group("crit").lower()))
                break
        else:
            other.append(text)
    return found, other


def _phase(raw: dict[str, JsonValue], pt: PhaseType, i: int) -> Phase:
    model_id = raw.get("model_id")
    if not isinstance(model_id, str) or not model_id:
        raise EBImportError(f"phase {i} ({raw.get('phase_type')}) has no model_id")
    end = _when(raw.get("timestamp"), "", f"phase {i} timestamp")
    seconds = raw.get("response_time_seconds")
    latency = float(seconds) if isinstance(seconds, int | float) and not isinstance(seconds, bool) else None
    start = end - timedelta(seconds=latency) if end is not None and latency is not None else end
    response = raw.get("response")
    response = response if isinstance(response, str) else ""
    inp, out = _int_or_none(raw.get("input_tokens")), _int_or_none(raw.get("output_tokens"))
    total = _int_or_none(raw.get("tokens_used"))
    fields: dict[str, object] = dict(
        phase_type=pt,
        model_id=model_id,
        prompt=raw.get("prompt") if isinstance(raw.get("prompt"), str) else "",
        response=response if response.strip() else "",
        finished_at=end,
        latency=latency,
        attempts=1,
        usage=Usage(input_tokens=inp or 0, output_tokens=out or 0),
        tokens_used=total,  # the runner's own total, kept beside the split
    )
    if start is not None:
        fields["timestamp"] = start
    if response.strip():
        fields["status"] = PhaseStatus.COMPLETE
        fields["finish_reason"] = "stop"
    else:
        fields.update(status=PhaseStatus.FAILED, error_kind="empty",
                      error="the original runner recorded an empty answer for this phase")
    return Phase.model_validate(fields)


def _iterable(value: JsonValue) -> Iterable[JsonValue]:
    """A JSON value iterated as the runner's lists are (None and empty give nothing; a number cannot be)."""
    if not value:
        return []
    if isinstance(value, int | float):
        raise TypeError(f"'{type(value).__name__}' object is not iterable")
    return value


def _scores_of(raw: object) -> dict[str, int | None]:
    raw = raw if isinstance(raw, dict) else {}
    return {c: _int_or_none(raw.get(c)) for c in CRITERIA}


def _judgment(data: dict[str, JsonValue], raw_reply: str | None, imported: Imported) -> Judgment | None:
    """The round's judgment: the runner's recorded scores as parsed (defaults removed), checked against
    ebtui's own re-parse of the judge's reply."""
    from ebtui.core.judgment import parse_judgment

    team_a, team_b, judge = _str(data, "team_a_model"), _str(data, "team_b_model"), _str(data, "judge_model")
    got = data.get("judgment")
    runner = got if isinstance(got, dict) else None
    mine = parse_judgment(raw_reply, team_a_id=team_a, team_b_id=team_b) if raw_reply else None
    if runner is None and mine is None:
        return None
    items: list[ReviewReason] = []
    provenance: list[ScoreSource] = []
    sources: dict[str, dict[str, str]] = {"a": {}, "b": {}}
    if runner is None:  # the reply without the runner's reading: ebtui's parse, with its own checklist
        assert mine is not None
        for t in ("a", "b"):
            for c, v in mine.parsed_scores(t).as_dict().items():
                sources[t][c] = "missing" if v is None else "ebtui"
        mine.judge_model = mine.judge_model or judge
        imported.score_sources = sources
        return mine
    defaulted, other_errors = defaulted_scores(_iterable(runner.get("parse_errors")))
    imported.runner_parse_errors = [str(e) for e in _iterable(runner.get("parse_errors"))]
    imported.defaulted = sorted(defaulted)
    recorded = {"a": _scores_of(runner.get("team_a_scores")), "b": _scores_of(runner.get("team_b_scores"))}
    imported.runner_scores = recorded
    parsed: dict[str, dict[str, int | None]] = {"a": {}, "b": {}}
    for t in ("a", "b"):
        ours = mine.parsed_scores(t).as_dict() if mine is not None else {}  # type: ignore[arg-type]
        for c in CRITERIA:
            r, e = recorded[t][c], ours.get(c)
            where = describe_target(t, c)
            theirs = mine.source_of(t, c) if mine is not None else None  # type: ignore[arg-type]
            if (t, c) in defaulted:
                parsed[t][c] = None
                sources[t][c] = "missing"
                seen = f"ebtui's parser reads {e} there" if e is not None else "ebtui's parser finds no score either"
                items.append(ReviewReason(team=t, criterion=c, kind="missing", message=(
                    f"{where}: missing — the original runner could not read it and recorded 5, which the judge "
                    f"never gave ({seen}); set it by override")))
                continue
            if r is None or not 1 <= r <= 10:
                parsed[t][c] = None
                sources[t][c] = "missing"
                items.append(ReviewReason(team=t, criterion=c, kind="missing", message=(
                    f"{where}: missing — the original runner recorded no usable score ({r!r})")))
                continue
            parsed[t][c] = r
            sources[t][c] = "imported"
            note = ""  # agreeing: the kind ("imported") says it all, the text is where ebtui read the same value
            if mine is not None and e != r:
                imported.disagreements.append({"team": t, "criterion": c, "runner": r, "ebtui": e})
                reads = f"reads {e}" if e is not None else "reads no score"
                note = f"ebtui's parser {reads} in the same reply"
                items.append(ReviewReason(team=t, criterion=c, kind="conflict", message=(
                    f"{where}: the original runner recorded {r}; ebtui's parser {reads} in the same reply "
                    f"(the recorded {r} is kept)")))
            provenance.append(ScoreSource(team=t, criterion=c, kind="imported", value=r, note=note,
                                          text=theirs.text if theirs is not None and e == r else "",
                                          position=theirs.position if theirs is not None and e == r else None))
    for other in other_errors:
        items.append(ReviewReason(kind="parser", message=f"the original runner noted: {other}"))

    said = runner

    def text(key: str, fallback: str) -> str:
        v = said.get(key)
        v = v.strip() if isinstance(v, str) else ""
        return fallback if not v or v.lower() in _NO_TEXT else v

    imported.score_sources = sources
    return Judgment(
        team_a_scores=Scores.model_validate(parsed["a"]),
        team_b_scores=Scores.model_validate(parsed["b"]),
        team_a_justification=text("team_a_justification", mine.team_a_justification if mine else ""),
        team_b_justification=text("team_b_justification", mine.team_b_justification if mine else ""),
        overall_analysis=text("overall_analysis", mine.overall_analysis if mine else ""),
        raw_response=raw_reply or "",
        review_items=items,
        provenance=provenance,
        parse_method="imported",
        judge_model=judge,
    )


def convert_round(
    record: SourceRecord,
    *,
    dilemmas: dict[str, Dilemma] | None = None,
    document: str = "",
    tournament_id: str | None = None,
) -> Round:
    """One of the runner's round records as an ebtui Round. Raises EBImportError saying what is wrong."""
    data = record.data
    if "phases" not in data and "judgment" not in data:
        raise EBImportError("not a round of the Ethics Bowl runner (no 'phases' or 'judgment')")
    for key in _REQUIRED:
        _str(data, key)
    phases_raw = data.get("phases") or []
    if not isinstance(phases_raw, list):
        raise EBImportError("'phases' is not a list")
    source_file = str(record.path.resolve())
    imported = Imported(
        runner=RUNNER,
        source_file=source_file,
        source_line=record.line,
        source_round_id=str(data["id"]),
        source_run=source_run(record.path),
        content_sha256=content_hash(data),
    )
    phases: dict[PhaseType, Phase] = {}
    prompts: dict[str, str] = {}
    raw_reply: str | None = None
    for i, ph in enumerate(phases_raw, 1):
        if not isinstance(ph, dict):
            raise EBImportError(f"phase {i} is not an object")
        name = ph.get("phase_type")
        if not isinstance(name, str) or not name:
            raise EBImportError(f"phase {i} has no phase_type")
        prompt, response = ph.get("prompt"), ph.get("response")
        if isinstance(prompt, str):
            prompts.setdefault(name, prompt)
        pt = _PHASES.get(name)
        converted = _phase(ph, pt or PhaseType.CONSISTENCY_TEST, i)
        if pt is None:  # consistency_test_b (Team B's consistency test) and anything newer
            imported.extra_phases[name] = converted
            continue
        phases[pt] = converted  # a phase recorded twice (a retry): the later one is the one judged
        if pt == PhaseType.JUDGMENT and isinstance(response, str) and response.strip():
            raw_reply = response
    dilemma_id = _str(data, "dilemma_id")
    doc_dilemma = (dilemmas or {}).get(dilemma_id)
    if doc_dilemma is None:
        imported.dilemma = dilemma_from_prompts(dilemma_id, prompts, source=f"imported from {source_file}")
    title = doc_dilemma.title if doc_dilemma else imported.dilemma.title  # type: ignore[union-attr]
    judgment = _judgment(data, raw_reply, imported)
    ordered = [phases[pt] for pt in _PHASES.values() if pt in phases]
    status_raw = str(data.get("status") or "")
    said_error = data.get("error")
    error = said_error if isinstance(said_error, str) and said_error else None
    complete = all(pt in phases and phases[pt].status == PhaseStatus.COMPLETE for pt in _PHASES.values())
    if status_raw == "complete" and complete and judgment is not None:
        status = RoundStatus.COMPLETE
    elif PhaseType.PRESENTATION not in phases or phases[PhaseType.PRESENTATION].status != PhaseStatus.COMPLETE:
        status = RoundStatus.FAILED
    else:
        status = RoundStatus.INCOMPLETE
    if status != RoundStatus.COMPLETE and error is None:
        error = f"the original runner left this round {status_raw or 'without a status'}" + (
            "" if complete else "; phases missing or empty")
    started = _when(data.get("timestamp"), "", "timestamp")
    ends = [p.finished_at for p in ordered if p.finished_at is not None]
    rid = imported_round_id(data)
    round_ = Round(
        id=rid,
        dilemma_id=dilemma_id,
        dilemma_title=title,
        team_a_model=_str(data, "team_a_model"),
        team_b_model=_str(data, "team_b_model"),
        judge_model=_str(data, "judge_model"),
        phases=ordered,
        judgment=judgment,
        finished_at=max(ends) if ends else None,
        status=status,
        error=error,
        tournament_id=tournament_id,
        exchange_id=rid,
        settings={"imported_from": RUNNER, "is_self_debate": bool(data.get("is_self_debate")),
                  # the dilemma as played, so an ebtui judge panel can re-judge the exchange
                  "dilemma": (doc_dilemma or imported.dilemma).model_dump(mode="json")},  # type: ignore[union-attr]
        document=document if doc_dilemma is not None else "",
        imported=imported,
    )
    if started is not None:
        round_.timestamp = started
    return round_


# --------------------------------------------------------------------------------------------- importing


def _tournament_id(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name.strip()).strip("-._")[:100]
    return slug if slug and slug[0].isalnum() else "t-" + hashlib.sha256(name.encode()).hexdigest()[:12]


def import_rounds(
    paths: Iterable[str | Path],
    store: ResultsStore,
    *,
    tournament: str | None = None,
    dilemmas: Iterable[Dilemma] | None = None,
    document: str = "",
    per_run: bool = False,
    keep_rounds: bool = True,
) -> ImportResult:
    """Import every round the paths hold into `store` (a ResultsStore). Rounds already in the store are
    left as they are (a human may have overridden scores since); bad files are reported, the rest import.
    `tournament` groups every round under one tournament; `per_run` groups each run's rounds under a
    tournament named after the run's folder.

    The files are read twice, one record at a time (first which save of each runner round is the latest,
    then converting and saving), so memory stays flat whatever their size; `keep_rounds=False` keeps no
    Round either (`result.saved` says what was saved)."""
    from ebtui.core.store import StoreError

    result = ImportResult()
    paths = list(paths)
    keep, result.superseded = latest_saves(iter_sources(paths, result.problems))
    by_id = {d.id: d for d in dilemmas or []}
    known = store.list_tournaments() if (tournament or per_run) else []
    by_name: dict[str, Tournament] = {}

    def tournament_for(name: str) -> Tournament:
        if name not in by_name:
            existing = next((t for t in known if name in (t.id, t.name)), None)
            by_name[name] = existing or Tournament(
                id=_tournament_id(name), name=name, status=TournamentStatus.COMPLETE, document=document,
                note=f"imported from {RUNNER} round files", config={"imported_from": RUNNER})
        return by_name[name]

    seen: set[str] = set()
    members: dict[str, _Members] = {}  # tournament id -> what its rounds in this import say
    for i, rec in enumerate(iter_sources(paths, [])):  # its problems were met in the first reading
        if i >= len(keep) or not keep[i]:
            continue
        name = tournament or (source_run(rec.path) if per_run else None)
        tid = tournament_for(name).id if name else None
        try:
            round_ = convert_round(rec, dilemmas=by_id, document=document, tournament_id=tid)
        except EBImportError as exc:
            result.problems.append(ImportProblem(rec.where, str(exc)))
            continue
        except (ValueError, TypeError) as exc:  # a value pydantic refuses; one line, never a traceback
            msg = " ".join(str(exc).split())
            result.problems.append(ImportProblem(rec.where, f"not a readable round ({msg[:200]})"))
            continue
        if round_.id in seen:
            result.duplicates.append((round_.id, rec.where))
            continue
        seen.add(round_.id)
        if store.round_path(round_.id).exists():
            result.already.append((round_.id, rec.where))
            if tid is not None:
                members.setdefault(tid, _Members()).stored.append(round_.id)
                _group(store, round_.id, tid, rec.where, result)
            continue
        try:
            store.save_round(round_)
        except (StoreError, OSError) as exc:
            result.problems.append(ImportProblem(rec.where, f"cannot save into the store: {exc}"))
            continue
        if tid is not None:
            members.setdefault(tid, _Members()).add(round_)
        result.saved.append(_saved(round_))
        if keep_rounds:
            result.imported.append(round_)
    for t in by_name.values():
        m = members.get(t.id)
        if m is None:
            continue
        for rid in m.stored:  # rounds the store held already: read one at a time
            try:
                m.add(store.load_round(rid))
            except StoreError:
                pass
        if not m.count:
            continue
        t.models = sorted(set(t.models) | m.models)
        t.dilemmas = sorted(set(t.dilemmas) | m.dilemmas)
        t.total_rounds = len(store.query(tournament=t.id))
        if m.finished is not None:
            t.finished_at = max([m.finished, *([t.finished_at] if t.finished_at else [])])
        store.save_tournament(t)
        result.tournaments.append(t)
    result.tournament = by_name.get(tournament) if tournament else None
    return result


@dataclass
class _Members:
    """A tournament's rounds in one import, summed up as they pass (none kept)."""

    models: set[str] = field(default_factory=set)
    dilemmas: set[str] = field(default_factory=set)
    finished: datetime | None = None
    count: int = 0
    stored: list[str] = field(default_factory=list)  # ids of rounds the store already held

    def add(self, r: Round) -> None:
        self.count += 1
        self.models |= {r.team_a_model, r.team_b_model, r.judge_model}
        self.dilemmas.add(r.dilemma_id)
        if r.finished_at is not None and (self.finished is None or r.finished_at > self.finished):
            self.finished = r.finished_at


def _saved(r: Round) -> ImportedRound:
    from ebtui.core.review import needs_review

    imp = r.imported
    source = "" if imp is None else str(imp.source_file) + (f":{imp.source_line}" if imp.source_line else "")
    return ImportedRound(r.id, imp.source_round_id if imp else None, source, needs_review(r.judgment),
                         len(imp.defaulted) if imp else 0, len(imp.disagreements) if imp else 0)


def _group(store: ResultsStore, round_id: str, tid: str, where: str, result: ImportResult) -> None:
    """A round imported before without a tournament joins the one now named (nothing else changes)."""
    from ebtui.core.store import StoreError

    try:
        existing = store.load_round(round_id)
    except StoreError as exc:
        result.problems.append(ImportProblem(where, f"already in the store but unreadable there: {exc}"))
        return
    if existing.tournament_id is None:
        existing.tournament_id = tid
        store.save_round(existing)
        result.grouped.append(round_id)
    elif existing.tournament_id != tid:
        result.elsewhere.append((round_id, existing.tournament_id))


# --------------------------------------------------------------------------------------------- checking


def runner_criteria_table(records: Iterable[SourceRecord | dict[str, JsonValue]], *, drop_defaulted: bool = True,
                          ) -> dict[tuple[str, str], tuple[float, int]]:
    """(model, criterion) -> (mean, n) over every team seat a model played, from the runner's recorded
    scores — the runner's own "Scores by Criterion" table, with its defaulted 5s left out (drop_defaulted)
    or counted as it counted them. Used to check an import against the runner's published numbers."""
    sums: dict[tuple[str, str], list[int]] = {}
    for rec in records:
        data = rec.data if isinstance(rec, SourceRecord) else rec
        j = data.get("judgment")
        if not isinstance(j, dict):
            continue
        defaulted, _ = defaulted_scores(_iterable(j.get("parse_errors")))
        for t, key in (("a", "team_a_model"), ("b", "team_b_model")):
            scores = _scores_of(j.get(f"team_{t}_scores"))
            for c, v in scores.items():
                if v is None or (drop_defaulted and (t, c) in defaulted):
                    continue
                sums.setdefault((str(data[key]), c), []).append(v)
    return {k: (sum(v) / len(v), len(v)) for k, v in sums.items()}
