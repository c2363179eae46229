"""Reading scores out of text: markdown tables, labelled lines, prose and corrections."""

from __future__ import annotations

import itertools
import re

from ebtui.core.judgment.accounting import loose_numbers
from ebtui.core.judgment.collective import Structures, count_label
from ebtui.core.judgment.corrections import CORR_LANG, INSTEAD, THIRD_RE, CorrectionReading
from ebtui.core.judgment.paragraphs import ParagraphReading
from ebtui.core.judgment.provenance import Collector, Ctx, TextState
from ebtui.core.judgment.references import Reference, reference_in
from ebtui.core.judgment.tables import CORR_HEADING, INITIALS, TableReading, delimited_as_pipes
from ebtui.core.judgment.vocabulary import (
    AFTER_NAME_RE,
    BOLD_LINE_RE,
    CRIT_KEYWORDS,
    CRIT_RE,
    JUST_LABEL_RE,
    LABEL_LEVEL,
    NUM,
    NUM_RE,
    OVERALL_LABEL_RE,
    SECTION_PART,
    STRIKE_RE,
    WORD_SCORE_LINE,
    WORD_VALUES,
    Val,
    bare_team,
    crit_name,
    heading_level,
    is_banner,
    labelled_pipes,
    score_in,
    skipped,
    team_of_match,
    val_of,
    via_of,
)
from ebtui.core.records import CRITERIA

# --------------------------------------------------------------------------------------------------------
# Text: markdown tables and "Criterion: 8/10" lines under team headings
# --------------------------------------------------------------------------------------------------------

_HEADING_RE = re.compile(r"\s{0,3}#{1,6}\s")
# what may follow a team's name for the line to be a label: "Team A:", "Team A (gpt-4o) -",
# "Team A's justification:", "Team A" alone — but not "Team B's response was good: ..."
_LABEL_REST_RE = re.compile(
    r"(?:[ \t]*\([^()\n]{0,80}\))?(?:[ \t]*[-—–,][ \t]*[\w./ ]{0,40}?(?:\([^()\n]{0,80}\))?)?"
    r"(?:[ \t]*(?:'s[ \t]+)?(?:justification|rationale|reasoning|scores?|evaluation|assessment|comments?"
    r"|feedback)(?![A-Za-z]))?[ \t]*(?:[:—–>-]|$)",
    re.IGNORECASE,
)
# "Principle 1", "stakeholder #2", "Framework 3": an item's number after a singular noun, not a score
_NUMBERED_ITEM = re.compile(r"(?i)(?:principle|stakeholder|framework)[ \t]+(?:#|no\.?[ \t]*)?\d")
# the scale a heading names: "(1-10)", "(out of 10)", "/10"
_SCALE_NOTE = re.compile(r"(?i)\(?[ \t]*(?:(?:out[ \t]+of|/)[ \t]*10|[01][ \t]*[-–][ \t]*10)[ \t]*\)?")
# two scores side by side: "8 / 6", "8/10 | 6/10", "8 vs 6", "8, 6"
_PAIR_RE = re.compile(
    rf"[ \t:=*_>\-–—]*{NUM}(?:[ \t]*/[ \t]*(?P<den>10))?[ \t*_]*(?P<sep>[ \t]/[ \t]|\||,|;|[ \t]vs\.?[ \t]|[ \t][-–—][ \t])"
    rf"[ \t*_]*(?<![\w.])(?P<num2>\d{{1,2}})(?:[ \t]*/[ \t]*(?P<den2>10))?(?![\d.]|[ \t]*/)"
)
# a line that opens with a criterion's label, set off by bold or by a stop: "**Consistency.**", "Consistency —"
_OPENING_LABEL = re.compile(
    rf"[ \t>*_-]*(?:\d{{1,2}}[.)][ \t]*)?(?:\*\*|__)?(?P<name>{CRIT_RE.pattern[4:]})[ \t]*(?:[.:—–][ \t]*(?:\*\*|__)|(?:\*\*|__)[ \t]*[.:—–])",
    re.IGNORECASE,
)
_LABEL_VALUE = re.compile(r"[ \t*_]*(?:\([^()\n]{0,40}\))?[ \t*_]*(?:[:=]|[-–—][ \t])[ \t*_]*\d")
# what may stand around a name on a line of its own: bullets, list numbers, markup, a colon
_LIST_MARK = re.compile(r"[\s>*_\-•·#:.()]*(?:\d{1,2}[.)][ \t]*)?[\s*_:.]*")
# a number, then a criterion's name and nothing else, or a reason set off after it: "8 — Principle articulation",
# "7: Consistency", "8/10 principle articulation — they ranked two principles"
_REVERSED = re.compile(
    rf"[\s>•\-]*{NUM}(?:[ \t]*/[ \t]*(?P<den>10))?(?:[ \t]*[—–:|\-][ \t]*|(?(den)[ \t]+|(?!)))"
    rf"(?P<crit>{CRIT_RE.pattern[4:]})(?:[ \t.:]*|[ \t]*(?:[—–;(]|[,.:-][ \t])[^\n]*)",
    re.IGNORECASE,
)


def _initial_score(initials: dict[str, str]) -> re.Pattern[str]:
    """A criterion by its initials (or a legend's abbreviation), then its score: "PA 8", "SR: 6", "CE=7"."""
    alts = "|".join(re.escape(k) for k in sorted(initials, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])(?P<ini>{alts})(?![A-Za-z0-9])[ \t]*[:=]?[ \t]*{NUM}"
                      rf"(?:[ \t]*/[ \t]*(?P<den>10))?(?![\d.%]|[ \t]*/)")


_INITIAL_SCORE = _initial_score(INITIALS)
_CRIT_NAME = CRIT_RE.pattern[4:]
#: a legend's entry: an abbreviation in capitals and the criterion it stands for ("CON = consistency",
#: "Consistency (CON)")
_LEGEND_ENTRY = re.compile(rf"(?<![A-Za-z0-9])(?P<ab>[A-Z][A-Za-z]{{0,4}})[ \t]*(?:=|:|—|–|-)[ \t]*(?i:(?P<name>{_CRIT_NAME}))"
                           rf"|(?i:(?P<name2>{_CRIT_NAME}))[ \t]*\((?P<ab2>[A-Z][A-Za-z]{{0,4}})\)")
# a team's bare letter as the label of its score: "A: 7", "B = 8/10"
_BARE_SCORE = re.compile(
    rf"(?<![A-Za-z0-9'’])([AB])(?:[ \t*_]*[:=][ \t*_]*|[ \t]+){NUM}(?:[ \t]*/[ \t]*(?P<den>\d{{1,3}}))?(?![\d.])"
)
# a label that is a team's bare letter: "- A (presenting): 8", "B - 7"
_BARE_LABEL = re.compile(r"[\s\->*•]*(?P<label>[AB](?![\w'’])(?:[ \t]*\([^()\n]{0,40}\))?)[ \t]*(?:[:=]|[-–—][ \t])[ \t]*")
# both teams by their bare letters, side by side: "(A / B)", "A (presenting) vs B (responding)"
_BARE_PAIR = re.compile(r"(?<![A-Za-z0-9'’])([AB])(?:[ \t]*\([^()\n]{0,40}\))?[ \t]*(?:/|\||vs\.?|versus|and|&)[ \t]*([AB])(?![A-Za-z0-9'’])")
_NUM_BEFORE_CRIT = re.compile(
    rf"{NUM}(?:[ \t]*(?:/|out[ \t]+of)[ \t]*(?P<den>\d{{1,3}}))?[ \t]*(?:points?[ \t]+)?(?:on|for|in)[ \t]+"
    r"(?:the[ \t]+|their[ \t]+|its[ \t]+|his[ \t]+|her[ \t]+)?[*_\"']*$", re.IGNORECASE
)
_LIST_GAP = re.compile(r"[\s,;:.\-–—*_()>•]*(?:(?:and|&)[ \t]+)?(?:(?:a|an)[ \t]+)?", re.IGNORECASE)


#: a word a reference to another cell holds (a cheap test before references.reference_in)
_REFERENCE_HINT = re.compile(r"(?i)(?<![a-z])(?:same|identical|equal(?:s|ling)?|match(?:es|ing)?|mirror(?:s|ing)?|as|like"
                             r"|ditto|likewise|in[ \t]+line)(?![a-z])")
#: a real judgment names each criterion a few times; past this many mentions a reply is not one, and
#: reading stops (keeps hostile input fast)
_MAX_MENTIONS = 2000
#: one value for each of a named set: "…: both 7", "…: 8 each", "…: 7/10 apiece", "…: all 6"; the clause ends after
#: it ("both 7-year-olds", "each of the 3 cases", "8 each of them" are not scores)
_DISTRIBUTIVE = re.compile(r"(?i)[ \t*_]*(?:[:=]|[-–—][ \t])[ \t*_]*(?:(?P<pre>both|all)[ \t]+)?(?P<num>\d{1,2}(?:\.\d)?)"
                           r"(?:[ \t]*/[ \t]*(?P<den>10))?(?:[ \t]+(?P<post>each|apiece))?[ \t*_]*(?=$|[.;,!(:—–]|[ \t]-[ \t])")
#: between two criteria's names in one label: "Principle articulation & consistency", "A, B and C"
_CRIT_JOIN = re.compile(r"(?i)[ \t*_]*(?:&|\+|/|,|and|,[ \t]*and)[ \t*_]*")


class TextReader(TableReading, CorrectionReading, ParagraphReading):
    def __init__(self, col: Collector, rx: re.Pattern[str]) -> None:
        self.col = col
        self.rx = rx
        col.rx = rx
        self.st = TextState()
        self.buffers: dict[str, list[str]] = {"a": [], "b": [], "overall": []}
        #: text given under an explicit "Justification:" label, preferred to the section's prose
        self.labelled: dict[str, list[str]] = {"a": [], "b": []}
        self.mentions_left = _MAX_MENTIONS
        self.paragraph = False  # the line is a paragraph under a criterion's label ("**Consistency.** …")
        self.initials, self.initial_rx = INITIALS, _INITIAL_SCORE  # (a legend in the reply adds its own)
        self.third = False  # in a third party's section ("## Team C"): its numbers are its own
        self.kept_headings: frozenset[int] = frozenset()  # unknown headings the structure keeps in their team's section
        self.recent: list[str] = []
        self.structures = Structures(col, rx)  # one value for many cells, both teams in a line (collective.py)
        #: the spans of the line's numbers a structure read (None: a line of counts, no number of it is loose)
        self.accounted: list[tuple[int, int]] | None = []
        self.referred: list[tuple[int, str, str]] = []  # (reading order, team, criterion) of each reference
        #: the line being read, and its offsets without markup (made when needed)
        self.raw: str = ""
        self.kept: tuple[list[int], int] | None = None
        #: "8 — Principle articulation" lines, held until their block ends (see flush_reversed)
        self.reversed: list[tuple[str | None, str, Val, Ctx]] = []

    # -- lines ----------------------------------------------------------------------------------------
    def read(self, text: str, original: str | None = None) -> None:
        """Read `text` (the reply with its JSON blanked out, same length); sources are quoted from
        `original` (the reply itself) at the same offsets."""
        self.original = original if original is not None and len(original) == len(text) else text
        text = delimited_as_pipes(text)  # CSV and space-aligned columns are tables too
        table: list[tuple[int, str]] = []
        offset = 0
        for raw in text.splitlines(keepends=True):
            at = offset
            offset += len(raw)
            raw = raw.rstrip("\r\n")
            if labelled_pipes(raw):
                # "Principle Articulation: 7 | Consistency: 8 | ...": labelled pairs with pipes between them,
                # not a table; read as the same line with semicolons (same length, so offsets still hold)
                raw = raw.replace("|", ";")
            elif raw.count("|") >= 2 or (raw.lstrip().startswith("|") and raw.count("|") >= 1):
                table.append((at, raw))
                continue
            if table:
                self.table(table)
                table = []
            self.col.ctx = Ctx(pos=at + len(raw) - len(raw.lstrip()), source=self._orig(at, raw), kind="line",
                                corrective=self.st.corrective, via=self.st.via, section=self.st.team)
            self.accounted = []
            self.line(raw)
            if raw.strip() and self.accounted is not None and self.mentions_left > 0 \
                    and not (self.third and self.st.team is None):
                rest = raw
                for a, b in self.accounted:  # (numbers a structure read: collective.py)
                    rest = rest[:a] + " " * (b - a) + rest[b:]
                self.col.loose += loose_numbers(rest, at, self.rx, self.st.team, self.st.crit, CRITERIA)
                if not self.accounted:
                    self.structures.note_numbers(raw, at, self.st.team)
            if raw.strip():
                self.recent.append(raw)
                del self.recent[:-3]
        if table:
            self.table(table)
        self.flush_reversed()
        self.structures.apply()
        for key in ("a", "b"):
            body = "\n".join(self.labelled[key] or self.buffers[key]).strip()
            if body:
                self.col.justification[key].append(body)
        body = "\n".join(self.buffers["overall"]).strip()
        if body:
            self.col.overall.append(body)

    def line(self, raw: str) -> None:
        self.raw, self.kept = raw, None  # (kept: the raw line's offsets without markup, made when needed)
        if "~~" in raw:
            raw = STRIKE_RE.sub(" ", raw)
        clean = raw.replace("*", "").replace("`", "").strip()
        rm = _REVERSED.fullmatch(clean) if clean and self.st.crit is None else None
        if rm is not None:
            # "8 — Principle articulation": the number first, then its criterion's name and nothing else
            self.reversed.append((self.st.team, crit_name(rm.group("crit")), val_of(rm), self.col.ctx))
            return
        self.flush_reversed()
        if not clean:
            return
        self.col.ctx.clean = clean
        wm = WORD_SCORE_LINE.fullmatch(clean)
        if wm is not None and (self.st.team is not None or self.rx.search(clean)):
            # "Consistency: eight": a number word as a label's value, read and flagged (a person checks it)
            team = team_of_match(t) if (t := self.rx.search(clean)) else self.st.team
            v = Val(str(WORD_VALUES[wm.group("word").lower()]), None, None, wm.start("word"))
            self.col.add_val(team, crit_name(wm.group("crit")), v, "lines", kind="prose")
            return
        heading = bool(_HEADING_RE.match(raw) or BOLD_LINE_RE.fullmatch(raw)) or (
            len(clean) <= 80 and clean.endswith(":")
        )
        heading = heading and bool(re.search(r"[A-Za-z]", clean))  # "**8/10**" is a score, not a heading
        low = clean.lower()
        crits: list[re.Match[str]] = []
        if self.mentions_left > 0 and any(w in low for w, _ in CRIT_KEYWORDS):
            for m in CRIT_RE.finditer(clean):
                if re.search(r"\d[ \t]*$", clean[max(0, m.start() - 8):m.start()]):
                    continue  # "3 stakeholders", "2 frameworks": a count, not the criterion's label
                if _NUMBERED_ITEM.match(clean, m.start()):
                    continue  # "their Principle 1 (autonomy)", "stakeholder 2": an item's number, not a score
                crits.append(m)
                self.mentions_left -= 1
                if self.mentions_left <= 0:
                    self.col.notes.append(f"the reply names criteria over {_MAX_MENTIONS} times; the rest was not read")
                    break
        self.paragraph = bool(crits) and bool(_OPENING_LABEL.match(raw))
        if len(crits) > 1 and self.paragraph:
            # "**Consistency.** When pressed they bent the principle … **Score: 6.**": a paragraph under its
            # criterion's label; a criterion word later in its prose is not another label unless a score
            # stands right after it ("…; Honesty: 9")
            crits = crits[:1] + [m for m in crits[1:] if _LABEL_VALUE.match(clean, m.end())]
        teams = list(self.rx.finditer(clean))
        if not heading and len(teams) == 1 and not crits and is_banner(clean, self.rx):
            heading = True  # "=== SCORE CARD: TEAM A ===", "TEAM B SCORES": a team's heading set off on its own
        lead, lead_end = self._leading_team(clean, teams)
        ov = OVERALL_LABEL_RE.fullmatch(clean)
        scored = False
        third = THIRD_RE.search(clean)

        if len(crits) >= 3 and self._legend(clean) and not self._scores_in(clean):
            return  # "Legend: PA = principle articulation, CON = consistency, …": abbreviations, no scores
        if not crits and not heading and self._initials_line(clean, teams, lead):
            return
        if not heading and len(crits) == 1 and _LIST_MARK.fullmatch(clean, 0, crits[0].start()) \
                and _LIST_MARK.fullmatch(clean, crits[0].end()):
            # a line that is a criterion's name and nothing else ("  - Consistency", "Principle articulation")
            # heads what follows it, like a heading: "- Score: 7", ": Team A 8 — Team B 7"
            self.st.crit = crit_name(crits[0].group(0))
            self.st.pair = None
            return
        if crits and (CORR_LANG.search(clean) or INSTEAD.search(clean)) and self.prose_corrections(clean):
            return  # "Team A's consistency should be 5, not 7": read as a correction, nothing else
        if not heading and count_label(clean):
            self.accounted = None  # "Stakeholders named — A: 4, B: 6": its numbers count the label's noun
            return
        if not heading and "~~" not in raw and self._reference(raw):
            return  # "Framework awareness: same as principle articulation" (references.py)
        if not heading and "~~" not in raw and (got := self.structures.read(raw, self.st.team, self.st.crit)):
            self.accounted = got.spans  # "8 on every criterion except …", "Edge: Team A, 8 to Team B's 7"
            if got.team is not None:
                self.st.team = self.st.section = got.team
                self.st.level = LABEL_LEVEL
            return
        if heading:
            self.st.crit = None
            self.st.pair = None
            self.st.corrective = bool(CORR_HEADING.search(clean))
            self.col.ctx.corrective = self.st.corrective
            tset = {team_of_match(m) for m in teams}
            if not tset and (bt := bare_team(clean)):
                tset = {bt}
            bp = _BARE_PAIR.search(clean) if not tset else None
            if bp is not None and bp.group(1).lower() != bp.group(2).lower() and not crits and not self._scores_in(clean):
                self.st.team = self.st.section = None  # "Scores (A / B)", "A (presenting) vs B (responding)"
                self.st.pair = (bp.group(1).lower(), bp.group(2).lower())
                return
            self.third = bool(not tset and third)
            if not tset and third:  # "## Team C (a hypothetical)", "### The previous team": nobody's scores
                self.st.team = self.st.section = None
                return
            if tset:
                self.st.via = via_of([m for m in teams]) if teams else "label"
            if ov and not crits and not tset:
                self.st.team = None
                self.st.section = "overall"
                if ov.group("rest"):
                    self.buffers["overall"].append(ov.group("rest"))
                return
            level = heading_level(raw)
            if tset:
                self.st.level = level
            elif self.st.team is not None and not crits and level <= self.st.level \
                    and not (self.st.corrective or SECTION_PART.search(clean)) and self.col.ctx.pos not in self.kept_headings \
                    and (level < LABEL_LEVEL or len(re.findall(r"[A-Za-z]+", clean)) <= 4):
                # (a longer line ending in a colon is a sentence leading into a list: "Here is how they did:")
                # "### Closing thoughts" after "### Team B", "**Verdict**" after "**Team A**", "Takeaways:": a
                # heading the reader does not know, at the team heading's level or above, ends the team's section
                self.st.team = self.st.section = None
            if len(tset) == 1:
                self.st.team = self.st.section = tset.pop()
            elif len(tset) == 2:
                self.st.team = self.st.section = None
                order = [team_of_match(m) for m in teams]
                if len(order) == 2 and not crits and not any(self._scores_in(clean)):
                    self.st.pair = (order[0], order[1])  # "Scores (Team A / Team B):", "**Team B vs Team A**"
            numbers = self._scores_in(clean, crits[0].end()) if len(crits) == 1 else []
            if len(crits) == 1 and (not numbers or (len(numbers) >= 2 and not tset)):
                # "### Consistency", "### Consistency (1 = contradictory, 10 = fully coherent)", "### Consistency —
                # anchors: 1 (absent), 10 (exemplary)": a criterion's heading (a rubric's anchors and the scale
                # are not scores: one heading naming no team gives no criterion several scores)
                self.st.crit = crit_name(crits[0].group(0))
                return
        elif lead is not None and not crits and (self.st.crit is None or not self._pairs(clean)):
            self.st.team = self.st.section = lead  # "Team A:" / "Team B (gpt-4o) -" label lines
            self.st.level = LABEL_LEVEL
            self.st.via = via_of(teams[:1]) if teams else "label"
        elif third and third.start() < 3 and not teams and not crits:
            self.st.team = self.st.section = None  # "Team C: ..." label line
            self.third = True
            return
        elif ov and ov.group("colon") and not crits:
            self.st.team = None
            self.st.section = "overall"
            self.buffers["overall"].append(ov.group("rest"))
            return

        if crits:
            if self.st.crit is not None and crits[0].start() > 0:
                # "- Team A: 8/10 — a clear principle" under a criterion heading: the score comes first
                prefix = clean[: crits[0].start()]
                scored = self._under_criterion(prefix, [m for m in teams if m.end() <= crits[0].start()])
            scored = self._distributed(clean, crits, teams) or self._criteria_line(clean, crits, teams) or scored
            if not scored and self.paragraph and len(crits) == 1:
                scored = self._paragraph_clauses(clean, crits[0])
        elif self.st.crit is not None:
            scored = self._under_criterion(clean, teams)
        if lead is not None and crits:
            self.st.team = lead
            self.st.via = via_of(teams[:1]) if teams else "label"

        if heading:
            return
        j = JUST_LABEL_RE.fullmatch(clean)
        target = self.st.section
        if lead is not None and not scored:
            j = JUST_LABEL_RE.fullmatch(clean, lead_end) or j
            target = lead
        if j is not None and target in ("a", "b"):
            self.labelled[target].append(j.group("rest"))
        elif target is not None:
            self.buffers[target].append(raw.strip())

    def _reference(self, raw: str) -> bool:
        """A cell given as another's score ("- Framework awareness: same as principle articulation", "Team B:
        the same" under a criterion's heading): kept for references.resolve, after the whole reply is read."""
        if len(raw) > 4000 or len(self.referred) > 50 or not _REFERENCE_HINT.search(raw):
            return False  # (a reply has fourteen cells: hostile input with thousands of references stays linear)
        flat = re.sub(r"[*`]", " ", raw)
        def previous() -> tuple[str, str] | None:
            last = max([*((f.seq, t, c) for t, cells in self.col.scores.items() for c, fs in cells.items() for f in fs),
                        *self.referred], default=None)
            return (last[1], last[2]) if last else None

        got = reference_in(flat, self.rx, self.st.team, self.st.crit, previous)
        if got is None:
            return False
        team, crit, ref_team, ref_crit = got
        self.col.references.append(Reference(team, crit, ref_team, ref_crit, self.col.ctx.source, self.col.ctx.pos))
        self.col.seq += 1
        self.referred.append((self.col.seq, team, crit))  # ("ditto" after it refers to this cell: a chain)
        if self.st.crit is None:
            self.st.team = self.st.team or team
        return True

    def _legend(self, clean: str) -> bool:
        """A legend: three or more abbreviations, each of a different criterion ("PA = principle articulation,
        CON = consistency, …"); its abbreviations then name those criteria (a team's letter never does)."""
        entries = {(m.group("ab") or m.group("ab2")): crit_name(m.group("name") or m.group("name2"))
                   for m in _LEGEND_ENTRY.finditer(clean)}
        entries = {ab: c for ab, c in entries.items() if ab not in ("A", "B")}
        if len(set(entries.values())) < 3 or len(entries) != len(set(entries.values())):
            return False
        self.initials = {**self.initials, **entries}
        self.initial_rx = _initial_score(self.initials)
        return True

    def _initials_line(self, clean: str, teams: list[re.Match[str]], lead: str | None) -> bool:
        """"Team A: PA 8, C 7, SR 6, UI 7, FA 8, IH 9, CE 7": three or more different criteria by their
        initials, each with its score right after it, for the line's (or the section's) team."""
        if not any(ch.isupper() for ch in clean):
            return False
        found = [(self.initials[m.group("ini")], m) for m in self.initial_rx.finditer(clean)
                 if not skipped(clean, m.start("num"), m.end())]
        if len({c for c, _ in found}) < 3 or len(found) != len({c for c, _ in found}):
            return False
        team = lead if lead is not None else (None if teams else self.st.team)
        if lead is not None:
            self.st.team = self.st.section = lead
        for crit, m in found:
            self.col.add_val(team, crit, val_of(m), "lines", kind="line")
        return True

    def flush_reversed(self) -> None:
        """Lines that put the number before the criterion's name are scores unless their numbers count 1, 2,
        3, … down the block: then they number the criteria (a list of the rubric), and give no score."""
        block, self.reversed = self.reversed, []
        nums = [v.num for _, _, v, _ in block]
        if len(block) >= 2 and nums == [str(i) for i in range(1, len(block) + 1)]:
            return
        for team, crit, v, ctx in block:
            self.col.ctx = ctx
            self.col.add_val(team, crit, v, "lines", kind="line")

    def _scores_in(self, clean: str, start: int = 0) -> list[Val]:
        """The numbers after `start` that could be scores: not a rubric's anchors, the scale, a question..."""
        blank = lambda m: " " * len(m.group(0))  # noqa: E731 - same length, so positions hold
        clean = self.rx.sub(blank, _SCALE_NOTE.sub(blank, clean))  # "Team 1" holds no score
        return [val_of(n) for n in NUM_RE.finditer(clean, start) if not skipped(clean, n.start("num"), n.end())]

    def _leading_team(self, clean: str, teams: list[re.Match[str]]) -> tuple[str | None, int]:
        """A line that starts by naming a team as a label: "Team A:", "Team B (gpt-4o) -", "Team A", "B:".
        Returns the team and where its name ends."""
        if teams and not re.search(r"[A-Za-z0-9]", re.sub(r"^\d{1,2}[.)][ \t]", "", clean[: teams[0].start()])):  # "- Team A", "1. Team A"
            if _LABEL_REST_RE.match(clean, teams[0].end()):
                return team_of_match(teams[0]), teams[0].end()
        bt = re.match(r"[^\w\n]{0,8}([ABab])(?![\w])", clean)
        if bt and _LABEL_REST_RE.match(clean, bt.end()) and len(clean) > 2 and ":" in clean[bt.end():bt.end() + 3]:
            return bt.group(1).lower(), bt.end()
        return None, 0

    def _pairs(self, segment: str, offset: int = 0) -> list[tuple[str, Val, str]]:
        """"Team A 8, Team B 6" / "Team A: 8/10 … Team B: 7/10" inside one stretch of text (offset: where
        the stretch starts in the line)."""
        out = []
        for m in self.rx.finditer(segment):
            n = AFTER_NAME_RE.match(segment, m.end())
            if n and not skipped(segment, n.start("num"), n.end()):
                v = val_of(n)
                v = Val(v.num, v.den, v.upper, v.start + offset, v.corrective)
                out.append((team_of_match(m), v, via_of([m])))
        if not out:
            # "A: 7, B: 8", "Scores — A: 8 ; B: 6": both teams by their bare letters, each with its score
            bare = [(m.group(1).lower(), m) for m in _BARE_SCORE.finditer(segment)
                    if not skipped(segment, m.start("num"), m.end())]
            if len({t for t, _ in bare}) == 2 and len(bare) == 2:
                out = [(t, Val(m.group("num"), m.group("den"), None, m.start("num") + offset), "label")
                       for t, m in bare]
        return out

    def _distributed(self, clean: str, crits: list[re.Match[str]], teams: list[re.Match[str]]) -> bool:
        """One value given to each of a named set by a distributive word: "Consistency: both 7" (no team's
        section: both teams), "Honesty & consistency: 8 each" (in a team's section: each criterion). Any other
        set (one criterion in a team's section, several outside one) is not read here."""
        m = _DISTRIBUTIVE.match(clean, crits[-1].end())
        if m is None or teams or not _LIST_MARK.fullmatch(clean, 0, crits[0].start()) or not (m["pre"] or m["post"]) \
                or any(not _CRIT_JOIN.fullmatch(clean, a.end(), b.start()) for a, b in itertools.pairwise(crits)):
            return False
        names = list(dict.fromkeys(crit_name(c.group(0)) for c in crits))
        word = (m["pre"] or m["post"]).lower()
        if len(names) == 1 and self.st.team is None and word != "all":
            cells = [(t, names[0]) for t in ("a", "b")]  # "both 7", "7 each": the two teams
        elif len(names) >= 2 and self.st.team in ("a", "b") and (word != "both" or len(names) == 2):
            cells = [(self.st.team, c) for c in names]  # "Honesty & consistency: 8 each": the named criteria
        else:
            return False
        for t, c in cells:
            self.col.add_val(t, c, Val(m["num"], m["den"], None, m.start("num")), "lines", kind="line")
        return True

    def _criteria_line(self, clean: str, crits: list[re.Match[str]], teams: list[re.Match[str]]) -> bool:
        scored = False
        ti = 0  # teams named before the current criterion (both lists are in order: one linear pass)
        # "8/10 on principle articulation, 7/10 on consistency": a number that introduces a criterion is that
        # criterion's, never the one before it
        before: list[re.Match[str] | None] = []
        for idx, cm in enumerate(crits):
            lo = crits[idx - 1].end() if idx else 0
            m = _NUM_BEFORE_CRIT.search(clean, lo, cm.start())
            # only in a list of such scores ("Team A: 8/10 on X, 7/10 on Y"), never in a sentence ("better
            # than the 6 for consistency they nearly got")
            if m is not None and not _LIST_GAP.fullmatch(self.rx.sub(" ", clean[lo:m.start("num")])):
                m = None
            before.append(m)
        for idx, cm in enumerate(crits):
            while ti < len(teams) and teams[ti].end() <= cm.start():
                ti += 1
            crit = crit_name(cm.group(0))
            end = crits[idx + 1].start() if idx + 1 < len(crits) else len(clean)
            nxt = before[idx + 1] if idx + 1 < len(crits) else None
            if nxt is not None:
                end = min(end, nxt.start("num"))
            pre = before[idx]
            if pre is not None and not skipped(clean, pre.start("num"), pre.end("num")):
                team: str | None = team_of_match(teams[ti - 1]) if ti else self.st.team
                self.col.add_val(team, crit, val_of(pre), "lines", via=via_of([teams[ti - 1]]) if ti else None,
                                 kind="prose")  # read, but a human should look: the score comes before its label
                scored = True
                continue
            segment = clean[cm.end():end]
            if self.st.pair is not None and not teams and (pm := _PAIR_RE.match(clean, cm.end(), end)):
                if not (pm.group("sep").strip() == "/" and pm.group("num2") == "10" and pm.group("den") is None):
                    # "Consistency: 8 / 6" under "Scores (Team A / Team B)": one score for each, in that order
                    first = val_of(pm)
                    second = Val(pm.group("num2"), pm.group("den2"), None, pm.start("num2"))
                    self.col.add_val(self.st.pair[0], crit, first, "lines")
                    self.col.add_val(self.st.pair[1], crit, second, "lines")
                    scored = True
                    continue
            pairs = self._pairs(segment, cm.end())
            if pairs:
                for t, pv, pvia in pairs:
                    self.col.add_val(t, crit, pv, "lines", via=pvia)
                scored = True
                continue
            # a team named after the score belongs to what follows it, not to this criterion
            first_team = self.rx.search(segment)
            para_team = self._paragraph_team(segment, team_of_match(teams[ti - 1]) if ti else self.st.team) \
                if first_team and self.paragraph and len(crits) == 1 else None
            if first_team and para_team is None:
                end = cm.end() + first_team.start()
            found = score_in(clean, cm.end(), end)
            if found is None:
                # named, but no score identified beside it: where a person should look if it stays missing
                owner = team_of_match(teams[ti - 1]) if ti else self.st.team
                if owner is not None and re.search(r"\d", clean[cm.end():end]):
                    self.col.unread.setdefault((owner, crit), self.col.ctx.source)
                continue
            v = found
            team = para_team or (team_of_match(teams[ti - 1]) if ti else self.st.team)
            via = via_of([teams[ti - 1]]) if ti else None
            # a third party named after the team and before the criterion ("unlike the previous team, whose
            # consistency ...") owns this score, not the team
            since = teams[ti - 1].end() if ti else 0
            if team is not None and THIRD_RE.search(clean, since, cm.start()):  # (no team: nothing to undo)
                team = None
            if idx and CORR_LANG.search(clean, crits[idx - 1].end(), cm.start()):
                v = Val(v.num, v.den, v.upper, v.start, True)  # "7 … actually, Consistency: 6"
            self.col.add_val(team, crit, v, "lines", via=via)
            scored = True
        return scored

    def _under_criterion(self, clean: str, teams: list[re.Match[str]]) -> bool:
        """Lines under a criterion heading: "Team A: 8/10" or "Score: 8"."""
        crit = self.st.crit
        assert crit is not None
        pairs = self._pairs(clean)
        if pairs:
            for t, v, via in pairs:
                self.col.add_val(t, crit, v, "lines", via=via)
            return True
        b = _BARE_LABEL.match(clean) if not teams else None
        if b is not None and (bt := bare_team(b.group("label"))):
            # "- A (presenting): 8/10" under a criterion heading
            n = NUM_RE.match(clean, b.end())
            if n and not skipped(clean, n.start("num"), n.end()):
                self.col.add_val(bt, crit, val_of(n), "lines")
                return True
        m = re.match(
            r"[\s\->*]*(?:(?:score|rating|grade|mark|points)[ \t]*[:=\-–—]?[ \t]*)?(?=\d)", clean, re.IGNORECASE
        )
        if m and not teams:
            n = NUM_RE.match(clean, m.end())
            # "2. Team A ..." is a list item; "1 = no principle stated" a rubric anchor
            if n and not re.match(r"[.)][ \t]+\w", clean[n.end():]) and not skipped(clean, n.start("num"), n.end()):
                self.col.add_val(self.st.team, crit, val_of(n), "lines")
                return True
        return False
