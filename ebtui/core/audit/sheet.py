"""The headless sheet: one CSV row per team x criterion of each drawn judgment, `human_score` to fill in, and
its reader, which refuses a whole file at its first bad line (one line naming the line and what is wrong)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping

from ebtui.core.audit.records import Audit, HumanRating
from ebtui.core.records import CRITERIA

COLUMNS = ("audit_id", "round_id", "judgment_id", "team", "criterion", "human_score")
_INT = re.compile(r"[+-]?\d+")


def _show(value: str) -> str:
    """A cell as an error message quotes it: repr (control characters escaped), cut at 40 characters."""
    return repr(value if len(value) <= 40 else value[:40] + "…")


class SheetError(ValueError):
    """A sheet that cannot be imported: the message is the one line to show (file, line, what is wrong)."""


def sheet_text(audit: Audit) -> str:
    """The sheet's CSV text: every cell of every drawn judgment, in the draw's order, human_score empty (or
    the score already given, so a re-imported sheet changes nothing)."""
    latest = audit.latest()
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for j in audit.judgments:
        for team in ("a", "b"):
            for c in CRITERIA:
                given = latest.get((j.round_id, j.judgment_id, team, c))
                w.writerow([audit.id, j.round_id, j.judgment_id, team, c, "" if given is None else given.score])
    return out.getvalue()


def read_sheet(text: str, audits: Mapping[str, Audit], *, name: str, rater: str) -> tuple[Audit, list[HumanRating]]:
    """The audit a filled sheet belongs to and the ratings it gives (empty cells give none). SheetError at the
    first problem, naming `name`, the line and what is wrong: nothing of the file is to be stored then."""
    def fail(line: int, what: str) -> SheetError:
        return SheetError(f"{name}: line {line}: {what}; nothing imported")

    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff")))
    try:
        header = next(reader)
    except StopIteration:
        raise SheetError(f"{name}: empty file, expected the header {','.join(COLUMNS)}; nothing imported") from None
    except csv.Error as exc:
        raise fail(1, f"not CSV ({exc})") from None
    if [h.strip() for h in header] != list(COLUMNS):
        raise fail(1, f"the header must be {','.join(COLUMNS)}")
    audit: Audit | None = None
    seen: dict[tuple[str, str, str, str], int] = {}
    ratings: list[HumanRating] = []
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise fail(reader.line_num, f"not CSV ({exc})") from None
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue  # a blank line
        if len(row) != len(COLUMNS):
            raise fail(line, f"{len(row)} cells, expected {len(COLUMNS)} ({','.join(COLUMNS)})")
        aid, rid, jid, team, crit, value = (cell.strip() for cell in row)
        if audit is None:
            if aid not in audits:
                raise fail(line, f"unknown audit {_show(aid)}")
            audit = audits[aid]
        elif aid != audit.id:
            raise fail(line, f"a row of audit {_show(aid)} in a sheet of audit {audit.id!r}")
        if not audit.drawn(rid, jid):
            raise fail(line, f"round {_show(rid)} judgment {_show(jid)} is not one of audit {audit.id}'s judgments")
        if team not in ("a", "b"):
            raise fail(line, f"team {_show(team)}: expected a or b")
        if crit not in CRITERIA:
            raise fail(line, f"unknown criterion {_show(crit)}: expected one of {', '.join(CRITERIA)}")
        key = (rid, jid, team, crit)
        if key in seen:
            raise fail(line, f"a second row for round {rid} judgment {jid} team {team} {crit} (first on line "
                             f"{seen[key]})")
        seen[key] = line
        if not value:
            continue
        if not _INT.fullmatch(value) or not 1 <= int(value) <= 10:
            raise fail(line, f"human_score {_show(value)}: expected an integer 1-10, or empty (not scored)")
        ratings.append(HumanRating(round_id=rid, judgment_id=jid, team=team, criterion=crit, score=int(value),
                                   rater=rater, source="sheet"))
    if audit is None:
        raise SheetError(f"{name}: no rows below the header; nothing imported")
    return audit, ratings
