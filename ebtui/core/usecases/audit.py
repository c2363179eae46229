"""The human audit, for both front ends: draw an audit, list audits, the blind item a person scores, store
their scores (app or sheet), and the report's `human_audit` section and the plan's audit size. Human scores
live in the audit's own file: the judgments and their overrides are never touched. docs/AUDIT.md."""

from __future__ import annotations

import getpass
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.analysis.common import Table
    from ebtui.core.audit.calibrate import Calibration
    from ebtui.core.audit.records import Audit as Audit
    from ebtui.core.records import Round
    from ebtui.core.usecases.context import AppContext

    class Selection(Protocol):  # what these functions read of ebtui.core.usecases.report.Selection
        @property
        def rounds(self) -> list[Round] | None: ...

        @property
        def filters(self) -> Mapping[str, str | None]: ...

__all__ = ["AuditSummary", "BlindItem", "blind_item", "current_audit", "default_rater", "draw_audit",
           "human_audit", "import_sheet", "list_audits", "load_audit", "rate", "resume_index", "skip", "write_sheet"]


def default_rater() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def _store_error(exc: Exception) -> UsageError:
    return UsageError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


def load_audit(ctx: AppContext, audit_id: str) -> Audit:
    """The saved audit (unknown or unreadable: UsageError)."""
    from pydantic import ValidationError

    from ebtui.core.audit.records import Audit
    from ebtui.core.store import StoreError

    try:
        raw = ctx.store.audits.read(audit_id)
        return Audit.model_validate_json(raw)
    except StoreError as exc:
        raise _store_error(exc) from None
    except ValidationError as exc:
        raise UsageError(f"{ctx.store.audits.path(audit_id)}: not a readable audit ({exc.errors()[0]['msg']})") from None


def all_audits(ctx: AppContext) -> list[Audit]:
    return [load_audit(ctx, aid) for aid in ctx.store.audits.ids()]


def draw_audit(ctx: AppContext, n: int, *, tournament: str | None = None, seed: int | None = None) -> Audit:
    """Draw n judgments uniformly at random (seeded) from the store's (or the tournament's) scored judgments
    and save the audit. The same seed on the same judgments draws the same ones."""
    from ebtui.core.audit.draw import draw

    if not ctx.store_root.is_dir():
        raise UsageError(f"no results store at {ctx.store_root} (give --store DIR)")
    rounds = ctx.store.load_rounds(tournament=tournament)
    seed = secrets.randbelow(2**31) if seed is None else seed
    try:
        audit = draw(rounds, n, seed, tournament=tournament)
    except ValueError as exc:
        where = f"tournament {tournament!r}" if tournament else str(ctx.store_root)
        raise UsageError(f"{where}: {exc}") from None
    _write(ctx, audit, new=True)
    return audit


def _write(ctx: AppContext, audit: Audit, *, new: bool = False) -> None:
    from ebtui.core.store import StoreError

    def change(old: bytes | None) -> bytes:
        if new and old is not None:
            raise UsageError(f"audit {audit.id} exists already")
        return audit.to_bytes()

    try:
        ctx.store.audits.change(audit.id, change)
    except (StoreError, OSError) as exc:
        raise _store_error(exc) from None


@dataclass(frozen=True)
class AuditSummary:
    id: str
    created: str
    tournament: str | None
    seed: int
    judgments: int
    done: int  # judgments with all 14 scores
    scores: int  # human scores in force
    raters: tuple[str, ...]


def list_audits(ctx: AppContext) -> list[AuditSummary]:
    out = []
    for a in all_audits(ctx):
        latest = a.latest()
        out.append(AuditSummary(a.id, a.created.strftime("%Y-%m-%d %H:%M"), a.tournament, a.seed, len(a.judgments),
                                a.done(), len(latest), tuple(sorted({r.rater for r in latest.values() if r.rater}))))
    return sorted(out, key=lambda s: s.created)


def rate(ctx: AppContext, audit_id: str, scores: Mapping[tuple[str, str, str, str], int] | Mapping[Any, int], *, rater: str,
         source: str = "app") -> Audit:
    """Store human scores of cells (round id, judgment id, team, criterion) of the audit's draw, re-reading its
    file under the store lock; a cell outside the draw or a score outside 1-10 is a UsageError (nothing stored).
    A score equal to the one in force is not stored again."""
    from ebtui.core.audit.records import Audit, HumanRating

    def change(old: bytes | None) -> bytes | None:
        if old is None:
            raise UsageError(f"audit {audit_id!r} not found")
        audit = Audit.model_validate_json(old)
        latest = audit.latest()
        added = []
        for (rid, jid, team, crit), score in scores.items():
            if not audit.drawn(rid, jid):
                raise UsageError(f"round {rid} judgment {jid} is not one of audit {audit_id}'s judgments")
            cur = latest.get((rid, jid, team, crit))
            if cur is not None and cur.score == score:
                continue
            try:
                added.append(HumanRating.model_validate({"round_id": rid, "judgment_id": jid, "team": team,
                                                         "criterion": crit, "score": score, "rater": rater,
                                                         "source": source}))
            except ValueError as exc:
                raise UsageError(f"{rid} {jid} team {team} {crit}: {exc}") from None
        if not added:
            return None
        audit.ratings.extend(added)
        return audit.to_bytes()

    _change(ctx, audit_id, change)
    return load_audit(ctx, audit_id)


def skip(ctx: AppContext, audit_id: str, ref: str, skipped: bool = True) -> None:
    """Mark a drawn judgment skipped in the app (or no longer skipped)."""
    from ebtui.core.audit.records import Audit

    def change(old: bytes | None) -> bytes | None:
        if old is None:
            raise UsageError(f"audit {audit_id!r} not found")
        audit = Audit.model_validate_json(old)
        now = [r for r in audit.skipped if r != ref] + ([ref] if skipped else [])
        if now == audit.skipped:
            return None
        audit.skipped = now
        return audit.to_bytes()

    _change(ctx, audit_id, change)


def _change(ctx: AppContext, audit_id: str, change: Any) -> None:
    from ebtui.core.store import StoreError

    try:
        ctx.store.audits.change(audit_id, change)
    except (StoreError, OSError) as exc:
        raise _store_error(exc) from None


# -- the sheet ----------------------------------------------------------------------------------------------
def write_sheet(ctx: AppContext, audit_id: str, out: Path) -> int:
    """The audit's CSV sheet at `out`; returns its number of rows."""
    from ebtui.core.audit.sheet import sheet_text

    text = sheet_text(load_audit(ctx, audit_id))
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    return text.count("\n") - 1


def import_sheet(ctx: AppContext, path: Path, *, rater: str | None = None) -> tuple[str, int]:
    """Store the scores of a filled sheet: (audit id, scores given in the sheet). Any bad line refuses the whole
    file (UsageError naming the line) and nothing is stored."""
    from ebtui.core.audit.sheet import SheetError, read_sheet
    from ebtui.errors import read_text

    text = read_text(path, UsageError, missing=f"{path}: no such file")
    try:
        audits = {a.id: a for a in all_audits(ctx)}
        audit, ratings = read_sheet(text, audits, name=str(path), rater=rater if rater is not None else default_rater())
    except SheetError as exc:
        raise UsageError(str(exc)) from None
    scores = {(r.round_id, r.judgment_id, r.team, r.criterion): r.score for r in ratings}
    if scores:
        rate(ctx, audit.id, scores, rater=ratings[0].rater, source="sheet")
    return audit.id, len(scores)


# -- the blind item -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BlindItem:
    """What the audit screen shows of one drawn judgment: the dilemma and the two teams' words, nothing of the
    judge (no scores, justifications, overrides, judge or team model names)."""

    index: int  # in the draw
    total: int
    round_id: str
    judgment_id: str
    dilemma_title: str
    dilemma_text: str
    phases: tuple[tuple[str, str, str], ...]  # (phase title, "Team A"/"Team B", text)
    given: dict[tuple[str, str], int]  # the person's own scores so far: (team, criterion) -> score


def blind_item(ctx: AppContext, audit: Audit, index: int) -> BlindItem:
    from ebtui.core.records import PHASE_SPEAKER, PhaseType
    from ebtui.core.store import StoreError

    j = audit.judgments[index]
    try:
        r = ctx.store.load_round(j.round_id)
    except StoreError as exc:
        raise _store_error(exc) from None
    seat_of = {"a": "Team A", "b": "Team B"}
    phases = []
    for p in r.phases:
        if p.phase_type == PhaseType.JUDGMENT or not p.response:
            continue
        seat = PHASE_SPEAKER[p.phase_type]
        phases.append((p.phase_type.value.replace("_", " ").capitalize(), seat_of.get(seat, seat), p.response))
    dilemma = r.imported.dilemma if r.imported is not None else None
    text = dilemma.core_scenario if dilemma is not None else str((r.settings.dilemma or {}).get("core_scenario", ""))
    latest = audit.latest()
    given = {(t, c): v.score for (rid, jid, t, c), v in latest.items() if rid == j.round_id and jid == j.judgment_id}
    return BlindItem(index, len(audit.judgments), j.round_id, j.judgment_id, r.dilemma_title or r.dilemma_id, text,
                     tuple(phases), given)


def current_audit(ctx: AppContext) -> Audit | None:
    """The audit the app opens: the newest with judgments still to score, else the newest (None: no audit)."""
    audits = sorted(all_audits(ctx), key=lambda a: a.created)
    open_ = [a for a in audits if a.done() < len(a.judgments)]
    pick = open_ or audits
    return pick[-1] if pick else None


def resume_index(audit: Audit) -> int:
    """Where the person left off: the first drawn judgment not fully scored and not skipped (else the first
    not fully scored, else 0)."""
    from ebtui.core.audit.records import judgment_ref

    latest = audit.latest()
    open_ = [i for i, j in enumerate(audit.judgments) if audit.cells_scored(j, latest) < 14]
    fresh = [i for i in open_ if judgment_ref(audit.judgments[i].round_id, audit.judgments[i].judgment_id)
             not in audit.skipped]
    return fresh[0] if fresh else (open_[0] if open_ else 0)


# -- the report and the plan --------------------------------------------------------------------------------
def usable_audits(audits: Sequence[Audit], rounds: Sequence[Round]) -> tuple[list[Audit], list[str]]:
    """The audits whose draw covers every scored judgment of these rounds (so the audited ones among them are a
    uniform random sample of them), and a note per audit left out."""
    from ebtui.core.audit.draw import population

    pop = set(population(rounds))
    use, notes = [], []
    for a in audits:
        if not a.ratings:
            continue
        missing = len(pop - set(a.population))
        if missing:
            notes.append(f"audit {a.id} left out: {missing} of these {len(pop)} judgments were not in its draw "
                         f"({'tournament ' + a.tournament if a.tournament else 'the store'} when it was drawn); "
                         "draw a new audit over these rounds")
        else:
            use.append(a)
    return use, notes


def calibration(ctx: AppContext, sel: Selection, families: Mapping[str, str], *, seed: int | None = None,
                replicates: int | None = None) -> Calibration:
    """The calibration of the report's selection (whole rounds are read: every judgment counts)."""
    from ebtui.core import analysis as an
    from ebtui.core.audit.calibrate import Calibration, calibrate

    audits = all_audits(ctx)
    if not any(a.ratings for a in audits):
        return Calibration(reason="no human-scored judgments (ebtui audit draw, then score them)")
    rounds = sel.rounds
    if rounds is None:
        from ebtui.core.views.means import rounds_with_team_seat

        rounds = ctx.store.load_rounds(tournament=sel.filters.get("tournament"), dilemma=sel.filters.get("dilemma"))
        if sel.filters.get("model"):
            rounds = rounds_with_team_seat(rounds, str(sel.filters["model"]))
    use, notes = usable_audits(audits, rounds)
    if not use:
        cal = Calibration(reason="no audit drawn over these rounds has human scores")
        cal.notes = notes
        return cal
    cal = calibrate(rounds, use, lambda m: families.get(m, m), seed=an.DEFAULT_SEED if seed is None else seed,
                    replicates=an.DEFAULT_REPLICATES if replicates is None else replicates)
    cal.notes = notes + cal.notes
    return cal


def human_audit(ctx: AppContext, sel: Selection, families: Mapping[str, str]) -> dict[str, Any]:
    """The `human_audit` object of `ebtui report --json`."""
    return calibration(ctx, sel, families).json()


def add_to_markdown(report_md: Path, cal: Calibration) -> None:
    """Append the section to report.md."""
    from ebtui.core.audit.present import markdown

    try:
        with report_md.open("a", encoding="utf-8") as fh:
            fh.write("\n" + markdown(cal))
    except OSError as exc:
        raise UsageError(f"cannot write the report to {report_md}: {exc.strerror or exc}") from None


def add_to_html(report_html: Path, cal: Calibration) -> None:
    """Put the section into the web report, before the end of its main part."""
    from ebtui.core.audit.present import html_section

    try:
        text = report_html.read_text(encoding="utf-8")
        end = text.rfind("</main>")
        text = text[:end] + html_section(cal) + text[end:] if end >= 0 else text + html_section(cal)
        report_html.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {report_html}: {exc.strerror or exc}") from None


def audit_tables(ctx: AppContext, tournament_id: str | None, families: Mapping[str, str]) -> list[Table]:
    """The section as the Analysis tab's tables ("Calibrated to N human-scored judgments: ..."); none when the
    store has no human scores."""
    from ebtui.core.analysis.common import VIEW_BOTH, Table
    from ebtui.core.audit.calibrate import Calibration, calibrate
    from ebtui.core.audit.present import intro, tables, title

    audits = [a for a in all_audits(ctx) if a.ratings]
    if not audits:
        return []
    rounds = ctx.store.load_rounds(tournament=tournament_id)
    use, notes = usable_audits(audits, rounds)
    cal = calibrate(rounds, use, lambda m: families.get(m, m)) if use else \
        Calibration(reason="no audit drawn over these rounds has human scores")
    cal.notes = notes + cal.notes
    head = title(cal)
    found = tables(cal)
    if not found:
        return [Table("human_audit", head, ["note"], [[intro(cal)]], view=VIEW_BOTH, notes=cal.notes)]
    keys = ("human_audit_models", "human_audit_judges", "human_audit_pairwise")
    return [Table(key, f"{head}: {caption}", header, [list(r) for r in rows], view=VIEW_BOTH,
                  notes=[intro(cal), *cal.notes])
            for key, (caption, header, rows) in zip(keys, found, strict=True)]


def audits_stamp(ctx: AppContext) -> tuple[tuple[str, int], ...]:
    """The audits' files and their modification times (a cache of the Analysis tab sees new human scores)."""
    folder = ctx.store_root / "audits"
    if not folder.is_dir():
        return ()
    return tuple(sorted((p.name, p.stat().st_mtime_ns) for p in folder.glob("*.json")))


def plan_audit(ctx: AppContext, half_width: float, *, tournaments: Sequence[str] = ()) -> dict[str, Any]:
    """How many audited judgments a 95% half-width of `half_width` for every calibrated model mean needs, over
    the rounds of these tournaments (none: every round), measured on the audits scored so far."""
    from ebtui.config import ConfigError
    from ebtui.core.audit.calibrate import Calibration, calibrate
    from ebtui.core.audit.draw import population
    from ebtui.core.audit.plan import audit_size
    from ebtui.core.families import round_families

    rounds = [r for t in tournaments for r in ctx.store.load_rounds(tournament=t)] if tournaments \
        else ctx.store.load_rounds()
    if not rounds:
        raise UsageError("no rounds to plan an audit for")
    use, notes = usable_audits([a for a in all_audits(ctx) if a.ratings], rounds)
    try:
        fams = round_families(rounds, ctx.models)
    except ConfigError:  # no readable models.toml: families from the rounds, else the names (as a report does)
        fams = round_families(rounds, None)
    cal = calibrate(rounds, use, lambda m: fams.get(m, m)) if use else \
        Calibration(reason="no human-scored judgments of these rounds yet")
    out = audit_size(cal, half_width, population=len(population(rounds)))
    out["notes"] = notes
    return out
