"""Resolving what was read into one value per score, its provenance and the review checklist."""

from __future__ import annotations

import re

from ebtui.core.judgment.accounting import Loose, numbers_in
from ebtui.core.judgment.json_reader import (
    JsonWalker,
)
from ebtui.core.judgment.lenient_json import JsonCandidate, json_candidates
from ebtui.core.judgment.meta_statements import flag_meta
from ebtui.core.judgment.ordered_lines import read_ordered
from ebtui.core.judgment.provenance import (
    Collector,
    Ctx,
    Found,
)
from ebtui.core.judgment.references import resolve as resolve_references
from ebtui.core.judgment.revisions import flag_revisions
from ebtui.core.judgment.sections import Outline, outline
from ebtui.core.judgment.text_reader import (
    TextReader,
)
from ebtui.core.judgment.vocabulary import (
    TEAM_LABEL,
    WORD_VALUES,
    team_regex,
    words,
)
from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment, ReviewReason, Scores, ScoreSource

# --------------------------------------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------------------------------------


def _label(team: str) -> str:
    return f"Team {TEAM_LABEL[team]}"


def _where(team: str, crit: str) -> str:
    return f"{_label(team)} {CRITERION_LABELS[crit]}"


def _quote(source: str, limit: int = 120) -> str:
    one = " ".join(source.split())
    return f"“{one[:limit]}{'…' if len(one) > limit else ''}”"


_DRAFT_RE = words("draft", "preliminary", "provisional", "tentative", r"initial[ \t]+(?:scores?|thoughts)")
_KIND_WORDS = {"json": "JSON", "json_repaired": "repaired JSON", "table": "a table", "line": "a labelled line",
               "prose": "prose", "correction": "a correction"}


def _key(f: Found) -> int | str:
    """What makes two readings one value: the score ("8/10" and "8" are one), else what was written."""
    return f.value if f.value is not None else f"?{f.shown}"




def _read_values(found: list[Found]) -> set[float]:
    """The values read for a cell, as numbers ("8/10" is 8, "7½" 7.5)."""
    out: set[float] = set()
    for f in found:
        nums = numbers_in(f.shown)
        if nums and nums[0].value is not None:
            out.add(nums[0].value)
    return out


def _loose_why(loose: Loose) -> str:
    if loose.value is not None and loose.value != int(loose.value) and 1 <= loose.value <= 10:
        return "is not a whole number (never rounded)"
    return "is not identifiable as its score or as anything else"


def unexplained_cells(col: Collector) -> dict[tuple[str, str], Loose]:
    """The cells an unexplained number makes a conflict: a number no rule explains, in text that names the
    cell, that is no value read for any cell the same text names."""
    out: dict[tuple[str, str], Loose] = {}
    # each cell's values and corrections, computed once (a reply with many readings stays linear)
    read = {(t, c): _read_values(found) for t in col.scores for c, found in col.scores[t].items()}
    fixes = {(t, c): [f for f in found if f.corrective] for t in col.scores for c, found in col.scores[t].items()}
    for loose in col.loose:
        if any(all(loose.value in read.get((t, c), ()) for t, c in group)
               for group in [*loose.own, *([cell] for cell in loose.refers)]):
            continue  # the value read for the cell it is attached to (restated), or one it refers to ("the same 8
            # as their consistency"); a value another named cell happens to have explains nothing
        if any(loose.text in f.source for cell in loose.named for f in fixes.get(cell, ())):
            continue  # the value a correction in the same line replaces ("8, actually make that 9")
        for t, c in loose.targets:
            if any(f.pos > loose.pos for f in fixes.get((t, c), ())):
                continue  # a later correction or final table ("Final scores", "Revised") settles the cell
            out.setdefault((t, c), loose)
    return out


def _finish(text: str, col: Collector, method: str, whole: list[ReviewReason]) -> Judgment:
    """Resolve what was found into one value per score, its provenance and the review checklist."""
    scores: dict[str, Scores] = {}
    loose_at = unexplained_cells(col)
    items: list[ReviewReason] = []
    provenance: list[ScoreSource] = []
    kinds: list[str] = []
    for team in ("a", "b"):
        values: dict[str, int | None] = {}
        for crit in CRITERIA:
            values[crit] = None
            found = sorted(col.scores[team].get(crit, []), key=lambda f: (f.pos, f.seq))
            doubt = next((sent for c, sent in col.doubts if c == crit), None)
            if doubt is not None:
                items.append(ReviewReason(team=team, criterion=crit, kind="conflict",
                                          message=f"{_where(team, crit)}: a correction of this criterion names no team "
                                                  f"of this round ({_quote(doubt)}); left missing"))
                if found and doubt in text:
                    provenance.append(ScoreSource(team=team, criterion=crit, kind="correction", value=None,
                                                  text=doubt, position=found[-1].pos,
                                                  note="a correction that names no team"))
                continue
            hedge = col.hedges.get((team, crit))
            if hedge is not None and not any(f.corrective and f.pos > hedge[1] for f in found):
                items.append(ReviewReason(team=team, criterion=crit, kind="conflict",
                                          message=f"{_where(team, crit)}: a change the judge did not state as made "
                                                  f"({_quote(hedge[0])}); left missing"))
                continue
            loose = loose_at.get((team, crit))
            if loose is not None and not found:
                items.append(ReviewReason(team=team, criterion=crit, kind="missing",
                                          message=f"{_where(team, crit)}: missing ({loose.shown} in "
                                                  f"{_quote(loose.text)} {_loose_why(loose)})"))
                continue
            if loose is not None:
                read = ", ".join(dict.fromkeys(f.shown for f in found)) or "nothing"
                items.append(ReviewReason(team=team, criterion=crit, kind="conflict",
                                          message=f"{_where(team, crit)}: read as {read}, but {loose.shown} in "
                                                  f"{_quote(loose.text)} is not explained as anything but a score; "
                                                  "left missing"))
                if found:
                    provenance.append(ScoreSource(team=team, criterion=crit, kind=found[-1].kind, value=None,
                                                  text=found[-1].source, position=found[-1].pos,
                                                  note=f"conflict: {read} vs {loose.shown}"))
                continue
            if not found:
                near = col.unread.get((team, crit))
                why = (f"nothing in {_quote(near)} can be identified as its score" if near
                       else "the judge gave no score")
                items.append(ReviewReason(team=team, criterion=crit, kind="missing",
                                          message=f"{_where(team, crit)}: missing ({why})"))
                continue
            # every reading counts: prose that gives another value than a table or a label, with no correction
            # language, is a conflict like any other (a person decides)
            # (a sentence's number that is no score at all — "53/70" in a totals line — is not a reading of it)
            use = [f for f in found if f.kind != "prose" or f.value is not None or f.corrective] or found
            # a value the judge called a draft is superseded by any later one
            draft = next((i for i, f in enumerate(use[:-1]) if _DRAFT_RE.search(f.source[:400])), None)
            if draft is not None:
                use = use[: draft + 1] + [Found(**{**f.__dict__, "corrective": True}) for f in use[draft + 1:]]
            # one score given twice ("8/10" in a section, "8" in a summary table) is one value
            shown = list(dict.fromkeys(f.shown for f in use))
            distinct = list(dict.fromkeys(_key(f) for f in use))
            chosen = use[0]
            corrected_from: str | None = None
            if len(distinct) > 1:
                last_corr = max((i for i, f in enumerate(use) if f.corrective), default=None)
                later = use[last_corr:] if last_corr is not None else []
                if last_corr is not None and all(_key(f) == _key(use[last_corr]) for f in later) and any(
                    _key(f) != _key(use[last_corr]) for f in use[:last_corr]
                ):
                    chosen = use[last_corr]
                    corrected_from = ", ".join(dict.fromkeys(f.shown for f in use[:last_corr]
                                                             if _key(f) != _key(chosen)))
                else:
                    items.append(ReviewReason(
                        team=team, criterion=crit, kind="conflict",
                        message=f"{_where(team, crit)}: given as {' and '.join(shown[:4])} with no correction "
                                f"({'; '.join(_quote(f.source, 60) for f in use[:3])}); left missing"))
                    provenance.append(ScoreSource(team=team, criterion=crit, kind=use[-1].kind, value=None,
                                                  text=use[-1].source, position=use[-1].pos,
                                                  note=f"conflict: {' vs '.join(shown[:4])}"))
                    continue
            value = chosen.value
            kind = "correction" if corrected_from is not None else chosen.kind
            note = f"corrected from {corrected_from} (read from {_KIND_WORDS.get(chosen.kind, chosen.kind)})" \
                if corrected_from is not None else ""
            if value is not None and not re.search(rf"(?<!\d){value}(?!\d)", text) and not (
                    chosen.kind == "prose" and re.search(rf"(?i)\b{list(WORD_VALUES)[value - 1]}\b", chosen.source)):
                value = None  # never a score the reply does not hold
                note = "could not be traced to the reply"
            if chosen.problem or value is None:
                problem = chosen.problem or "could not be traced to the reply"
                items.append(ReviewReason(team=team, criterion=crit, kind="invalid",
                                          message=f"{_where(team, crit)}: {problem} in {_quote(chosen.source)}; left missing"))
            elif corrected_from is not None:
                items.append(ReviewReason(team=team, criterion=crit, kind="correction",
                                          message=f"{_where(team, crit)}: {corrected_from} corrected to {value} "
                                                  f"by {_quote(chosen.source)}"))
            elif kind in ("prose", "correction") and not (kind == "prose" and chosen.settled):
                items.append(ReviewReason(team=team, criterion=crit, kind="prose",
                                          message=f"{_where(team, crit)}: {value} read from prose {_quote(chosen.source)}"))
            values[crit] = value
            kinds.append(chosen.kind)
            provenance.append(ScoreSource(team=team, criterion=crit, kind=kind, value=value, text=chosen.source,
                                          position=chosen.pos, note=note))
        scores[team] = Scores(**values)
    missing = any(s.missing() for s in scores.values())
    for note in col.notes:
        whole.append(ReviewReason(kind="parser", message=note))
    if col.unattributed and missing:
        whole.append(ReviewReason(kind="unattributed",
                                  message=f"{col.unattributed} score(s) found for no team of this round (left out)"))
    items = whole + items
    if method not in ("none",) and kinds:
        if all(k == "json" for k in kinds):
            method = "json"
        elif all(k in ("json", "json_repaired") for k in kinds):
            method = "json_repaired"
        elif "table" in kinds:
            method = "table"
        else:
            method = "lines"
    return Judgment(
        team_a_scores=scores["a"],
        team_b_scores=scores["b"],
        team_a_justification="\n\n".join(j for j in col.justification["a"] if j.strip()).strip(),
        team_b_justification="\n\n".join(j for j in col.justification["b"] if j.strip()).strip(),
        overall_analysis="\n\n".join(o for o in col.overall if o.strip()).strip(),
        raw_response=text,
        review_items=items,
        provenance=provenance,
        parse_method=method,
    )


def parse_judgment(text: str, *, team_a_id: str | None = None, team_b_id: str | None = None,
                   finish_reason: str | None = None) -> Judgment:
    """Read a judge's reply. Never raises, never invents a score; see docs/JUDGMENT.md.

    `finish_reason` (optional): the provider's, where known; "length" says the reply was cut off, so the last
    number it holds is never read (a reply that ends mid-row or mid-line is treated the same without it)."""
    raw = text if isinstance(text, str) else ""
    try:
        answer = box_tables_as_pipes(without_reasoning(raw))
        j = _parse(answer, team_a_id or "", team_b_id or "", cut=finish_reason == "length")
        return j if answer is raw else j.model_copy(update={"raw_response": raw})
    except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the reply; it is flagged instead
        msg = f"internal parser error ({type(exc).__name__}); the reply needs reading by hand"
        return Judgment(
            raw_response=raw,
            review_items=[ReviewReason(kind="parser", message=msg)],
            parse_method="none",
        )


_NOT_NEWLINE = re.compile(r"[^\n]")
#: a reasoning model's working before its answer: "<think>…</think>" (or thinking/reasoning) opening the reply
_REASONING = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)


#: box-drawing characters (U+2500-U+257F): a rule's line pieces, and the bars that part a row's cells
_BOX_LINE = "─━═┄┅┈┉╌╍"
_BOX_BARS = "│┃║┆┇┊┋╎╏"
_BOX_ROW = re.compile(r"^[ \t]*[\u2500-\u257f][\u2500-\u257f \t]*$", re.M)


def box_tables_as_pipes(text: str) -> str:
    """A table drawn with box-drawing characters read as a markdown one (same length, so every offset stays the
    reply's): a row's bars become "|", a rule inside the table ("├───┼───┤") a "|---|---|" separator, and the
    top and bottom rules ("┌…┐", "└…┘") blank."""
    if not any(b in text for b in _BOX_BARS):
        return text

    def rule(m: re.Match[str]) -> str:
        line = m.group(0)
        if line.strip()[:1] in "┌╔┏└╚┗╭╰":
            return " " * len(line)  # (the top or bottom rule: no row of the table)
        return "".join(ch if ch.isspace() else "-" if ch in _BOX_LINE else "|" for ch in line)

    return _BOX_ROW.sub(rule, text).translate({ord(b): "|" for b in _BOX_BARS})


def without_reasoning(text: str) -> str:
    """The reply with a reasoning model's closed working block at its start blanked (same length, newlines kept):
    its numbers are drafts ("maybe 8 … 7"), the answer after it is the judgment. A block never closed, or with
    nothing after it, is left as it is (then it is all there is to read, with its conflicts)."""
    m = _REASONING.match(text)
    if m is None or not text[m.end():].strip():
        return text
    return _NOT_NEWLINE.sub(" ", text[:m.end()]) + text[m.end():]


def _missing_any(col: Collector) -> bool:
    return any(not col.scores[t].get(c) for t in ("a", "b") for c in CRITERIA)


def _score_entries(col: Collector) -> int:
    return sum(len(found) for d in col.scores.values() for found in d.values()) + col.unattributed


#: the last number of the reply's last line, and what follows it
_LAST_NUMBER = re.compile(r"(?:\d+[ \t]*(?:[-–/.]|out[ \t]+of|to)[ \t]*)*\d[\d.,/]*(?:[ \t]*(?:/|out[ \t]+of)[ \t]*\d*)?[^\d\n]*\Z")


_ENDS_ON_NUMBER = re.compile(r"\d[*_]*$")
#: (a scale's maximum ending a sentence, "… out of 10." or "8/10.", is complete: the score before it is whole)
_COULD_GO_ON = re.compile(r"(?:(?<![\d.])1|/[ \t]*1?|out[ \t]+of(?:[ \t]+1)?|(?<![\d/])(?<!/[ \t])(?<!of[ \t])\d+[.\-–])[*_]*$")
#: a line that gives a labelled number: "Consistency: 8", "- **Honesty** - 7/10 — candid", "Team A: 8"
_LABELLED_NUMBER = re.compile(r"(?:[-*•]?[ \t]*\d{1,2}[.)][ \t]+)?[^\d\n]{2,80}?[:=\-–—][ \t*_]*\d{1,2}(?:[ \t]*(?:/|out[ \t]+of)[ \t]*10)?(?P<after>[^\n]*)$")


_AFTER_LAST_NUMBER = re.compile(r"\d(?:[ \t]*(?:/|out[ \t]+of)[ \t]*10)?([^\d\n]*)$")


def _ends_inside_line(text: str, body: str) -> bool:
    if _COULD_GO_ON.search(body):
        return True
    if not _ENDS_ON_NUMBER.search(body):
        return False
    # the judge's labelled lines before this one: complete where most of them also end on their number
    afters = [a.group(1).strip() for line in text.splitlines()[-40:-1]
              if _LABELLED_NUMBER.match(line.strip()) and (a := _AFTER_LAST_NUMBER.search(line.strip()))]
    return bool(afters) and sum(1 for a in afters if a and a.strip("*_")) * 2 > len(afters)


def cut_tail(text: str, cut: bool, original: str | None = None) -> tuple[str, str | None]:
    """Where the reply ends inside a structure, or was cut off (`cut`), the last number of its last line cannot
    be trusted ("| 1" may have been "| 10", "7" "7.5" or "70%"). The reply ends inside a structure where its
    last line is a table row without its closing "|", or ends on a number while the lines before it that end
    the same way ("Label: N") do not: the judge's own lines show something followed ("/10", a reason), or
    the number could have gone on ("… 1", "7/1", "7.", "7-"). Returns the text with that number blanked
    (same length) and the line it stood in, or the text unchanged and None."""
    end = len(text.rstrip())
    if original is not None and len(original.rstrip()) != end:
        return text, None  # the reply ends inside its JSON, which the JSON reader reads (or drops) itself
    start = text.rfind("\n", 0, end) + 1
    body = text[start:end].strip()
    if not body:
        return text, None
    newline_after = "\n" in text[end:]
    row_cut = body.startswith("|") and not body.endswith("|")
    if not (cut or row_cut or (not newline_after and _ends_inside_line(text, body))):
        return text, None
    m = _LAST_NUMBER.search(text[:end], start)
    if m is None:
        return text, None
    return text[: m.start()] + " " * (len(text) - m.start()), body


def _parse(text: str, team_a_id: str, team_b_id: str, cut: bool = False) -> Judgment:
    if not text.strip():
        return _finish(text, Collector(), "none", [ReviewReason(kind="missing", message="empty reply")])
    rx = team_regex(team_a_id.strip(), team_b_id.strip())

    # JSON, every object in order (a later object that gives scores corrects an earlier one)
    jcol = Collector()
    walker = JsonWalker(jcol, rx, text)
    scored: list[JsonCandidate] = []
    pieces: list[str] = []  # the text with its JSON blanked out (same length), for the text reader
    pos = 0
    for cand in json_candidates(text):
        before = _score_entries(jcol)
        jcol.ctx = Ctx(pos=cand.span[0], kind="json" if cand.strict else "json_repaired",
                        corrective=bool(scored))
        walker.start(cand.span)
        walker.walk(cand.value, None, None)
        if _score_entries(jcol) != before:
            scored.append(cand)
        start, end = cand.span
        pieces.append(text[pos:start])
        pieces.append(_NOT_NEWLINE.sub(" ", text[start:end]))
        pos = end
    pieces.append(text[pos:])

    # text, always read (JSON blanked out: it is read as JSON or not at all): tables, labelled lines,
    # prose, and corrections written after the JSON
    tcol = Collector()
    blanked, cut_line = cut_tail("".join(pieces), cut, text)
    sections = outline(blanked, rx)  # which unknown headings stay inside a team's section (sections.py)
    reader = TextReader(tcol, rx)
    reader.kept_headings = sections.kept
    reader.read(blanked, text)
    read_ordered(blanked, text, tcol, rx)  # lists in a stated order (ordered_lines.py)

    whole: list[ReviewReason] = []
    col = jcol
    for team in ("a", "b"):
        for crit, found in tcol.scores[team].items():
            col.scores[team].setdefault(crit, []).extend(found)
        if not col.justification[team]:
            col.justification[team] = tcol.justification[team]
    col.overall = col.overall or tcol.overall
    col.unattributed += tcol.unattributed
    col.notes += tcol.notes
    col.doubts += tcol.doubts
    col.hedges = {**tcol.hedges, **col.hedges}
    col.unread = {**tcol.unread, **col.unread}
    col.sources |= tcol.sources
    col.loose += tcol.loose
    col.references += tcol.references
    if any(c.truncated for c in scored):
        whole.append(ReviewReason(kind="truncated",
                                  message="the reply was cut off before its JSON ended; only complete scores were kept"))
    if cut_line is not None and _missing_any(col):
        whole.append(ReviewReason(kind="truncated", message=f"the reply ends inside {_quote(cut_line, 80)}: its last "
                                  "number was not read (cut off, it may have been longer: 1 could be 10)"))
    method = "json" if col.count() else "none"
    if not col.count():
        whole.append(ReviewReason(kind="missing", message="no scores found in the reply"))
    # a later sentence that revises a value in words the reader did not take flags its cell (revisions.py)
    judged = _doubtful_sections(_finish(text, col, method, whole), sections, rx)
    # what the judge says about its own scores ("Swap them", "for 8 read 5", a 1-5 scale) flags them too
    judged = flag_meta(flag_revisions(judged, text, rx, kept=sections.kept), text, rx)
    # then a cell given as another's score takes that value where it was read unambiguously (references.py)
    return resolve_references(judged, col.references)


def _doubtful_sections(j: Judgment, sections: Outline, rx: re.Pattern[str]) -> Judgment:
    """Flag each value read in a block the structure keeps in a team's section only on a guess (its heading
    stands at the team heading's level and the other team's section does not repeat it), and each value given to
    a team, in a line that does not name it, after the heading that ended its section (sections.py)."""
    items = []
    regions = [(r, True) for r in sections.doubtful] + [(r, False) for r in sections.ended]
    for src in j.provenance:
        at = src.position if src.position is not None else -1
        for (start, end, team, heading), kept in regions:
            if src.value is None or src.team != team or not start <= at < end or src.kind == "json" or (
                    not kept and rx.search(src.text)):
                continue
            why = ("a heading at the level of its heading that the other team's section does not repeat" if kept
                   else "a heading that ended its section")
            items.append(ReviewReason(
                team=src.team, criterion=src.criterion, kind="section",
                message=f"{_where(src.team, src.criterion)}: {src.value} read under “{heading}”, {why}: is it "
                        f"{_label(team)}'s?"))
    if not items:
        return j
    review = [*j.review_items, *items]
    return j.model_copy(update={"review_items": review, "needs_review": True,
                                "review_reasons": list(dict.fromkeys(i.message for i in review))})

