"""Reading scores out of text: markdown tables, labelled lines, prose and corrections."""

from __future__ import annotations

import re

from ebtui.core.judgment.accounting import loose_numbers
from ebtui.core.judgment.provenance import Collector, Ctx, Found, TextState
from ebtui.core.judgment.tables import CORR_HEADING, INITIALS, TableReading, delimited_as_pipes
from ebtui.core.judgment.vocabulary import (
    AFTER_NAME_RE,
    BOLD_LINE_RE,
    CRIT_KEYWORDS,
    CRIT_RE,
    DEN,
    JUST_LABEL_RE,
    LABEL_LEVEL,
    NOT_COUNT,
    NUM,
    NUM_RE,
    OPPONENT_RE,
    OVERALL_LABEL_RE,
    SECTION_PART,
    STRIKE_RE,
    WORD_SCORE_LINE,
    WORD_VALUES,
    Val,
    bare_team,
    crit_name,
    heading_level,
    interpret,
    is_banner,
    labelled_pipes,
    other,
    score_in,
    skipped,
    team_of_match,
    val_of,
    via_of,
    words,
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
# a team the round does not have: "Team C", "Team 3", "the previous team", "another team"
# (the round has two teams: Team A / B, 1 / 2, One / Two, and "the other team" is the opponent, not a third)
_THIRD_RE = re.compile(
    r"(?i)(?<![a-z0-9])team[ \t_-]*(?:[c-z]|[03-9]|\d{2}|three|four|five)(?![a-z0-9])"
    r"|(?<![a-z])(?:previous|another|third|earlier|prior|hypothetical|last|former|different|past|fictional)"
    r"[ \t]+(?:team|side|group|debater|presenter|respondent|round)s?(?![a-z])"
)
# language that makes a later value a correction of an earlier one
_CORR_LANG = words(
    r"should(?:[ \t]+(?:have|instead|really))?[ \t]+(?:be(?:en)?|read)", "correct(?:ion|ed|ing)?",
    "revis(?:e|ed|ing|ion)", "amend(?:ed|ing|ment)?", "adjust(?:ed|ing)?", "lower(?:ed|ing)?", "rais(?:e|ed|ing)",
    "bump(?:ed|ing)?", "chang(?:e|ed|ing)", "updat(?:e|ed|ing)", r"on[ \t]+reflection", r"on[ \t]+second[ \t]+thought",
    "actually", r"i[ \t]+meant", "typo", "mistake", "erratum")
# a sentence's correction is about a score: it says so, or speaks as the judge, or is "should be N, not M"
_CN = rf"[*\"']*{NUM}(?:{DEN}|{NOT_COUNT})"
#: where the corrected value stands, in order of preference; (pattern, needs score talk in the sentence: the
#: value is where a change moved the score, "to 6", and the sentence must say it is a score that moved)
_CORR_TARGETS: list[tuple[re.Pattern[str], bool]] = [
    (re.compile(rf"(?i)(?<![a-z])from[ \t]+(?:a[ \t]+)?\d{{1,2}}(?:[ \t]*/[ \t]*10)?[ \t]+(?:down[ \t]+|up[ \t]+)?to[ \t]+(?:a[ \t]+)?{_CN}"), True),
    (re.compile(rf"(?i)(?<![a-z])should(?:[ \t]+(?:have|instead|really))?[ \t]+(?:be(?:en)?|read)[ \t]+(?:a[ \t]+)?{_CN}"), False),
    (re.compile(rf"(?i){_CN}[ \t]*,?[ \t]*\(?(?:and[ \t]+)?not[ \t]+(?:a[ \t]+)?\d"), False),
    # "a 4 on consistency, not 5": the value the sentence sets against the one it takes back
    (re.compile(rf"(?i){_CN}[^\d.;:!?]{{0,60}}?(?:,[ \t]*|[ \t]+)(?:not|rather[ \t]+than|instead[ \t]+of)[ \t]+(?:a[ \t]+)?\d"), False),
    (re.compile(rf"(?i)(?<![a-z])(?:to|as|at)[ \t]+(?:a[ \t]+)?{_CN}"), True),
    (re.compile(rf"(?i)(?:correction|corrected|revised|updated|amended)[^\d\n]{{0,60}}?[:=\-–—][ \t]*{_CN}"), False),
]
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


# a criterion by its initials, then its score: "PA 8", "SR: 6", "CE=7"
_INITIAL_SCORE = re.compile(
    rf"(?<![A-Za-z0-9])(?P<ini>{'|'.join(sorted(INITIALS, key=len, reverse=True))})(?![A-Za-z0-9])[ \t]*[:=]?[ \t]*{NUM}"
    rf"(?:[ \t]*/[ \t]*(?P<den>10))?(?![\d.%]|[ \t]*/)"
)
# a team's bare letter as the label of its score: "A: 7", "B = 8/10"
_BARE_SCORE = re.compile(
    rf"(?<![A-Za-z0-9'’])([AB])(?:[ \t*_]*[:=][ \t*_]*|[ \t]+){NUM}(?:[ \t]*/[ \t]*(?P<den>\d{{1,3}}))?(?![\d.])"
)
# a team named by its bare letter inside a sentence: "A's consistency", "B (responding)"
_BARE_MENTION = re.compile(r"(?<![A-Za-z0-9])([AB])(?:['’]s(?![a-z])|[ \t]*\((?:present|respond)[a-z]*\))")
# a label that is a team's bare letter: "- A (presenting): 8", "B - 7"
_BARE_LABEL = re.compile(r"[\s\->*•]*(?P<label>[AB](?![\w'’])(?:[ \t]*\([^()\n]{0,40}\))?)[ \t]*(?:[:=]|[-–—][ \t])[ \t]*")
# both teams by their bare letters, side by side: "(A / B)", "A (presenting) vs B (responding)"
_BARE_PAIR = re.compile(r"(?<![A-Za-z0-9'’])([AB])(?:[ \t]*\([^()\n]{0,40}\))?[ \t]*(?:/|\||vs\.?|versus|and|&)[ \t]*([AB])(?![A-Za-z0-9'’])")
# a value set against the one it replaces: "deserves a 6 rather than 8", "a 5 instead of the 7", "6, not 8"
_INSTEAD = re.compile(rf"(?i){_CN}[ \t]*,?[ \t]*(?:rather[ \t]+than|instead[ \t]+of|not)[ \t]+(?:a[ \t]+|an[ \t]+|the[ \t]+)?\d")
_NUM_BEFORE_CRIT = re.compile(
    rf"{NUM}(?:[ \t]*(?:/|out[ \t]+of)[ \t]*(?P<den>\d{{1,3}}))?[ \t]*(?:points?[ \t]+)?(?:on|for|in)[ \t]+"
    r"(?:the[ \t]+|their[ \t]+|its[ \t]+|his[ \t]+|her[ \t]+)?[*_\"']*$", re.IGNORECASE
)
_LIST_GAP = re.compile(r"[\s,;:.\-–—*_()>•]*(?:(?:and|&)[ \t]+)?(?:(?:a|an)[ \t]+)?", re.IGNORECASE)
# a conditional or counterfactual: the change it speaks of was not made ("if they had …", "I would have raised")
_HYPOTHETICAL = words(
    "if", "unless", r"had[ \t]+(?:they|it|the[ \t]+team|team[ \t]+\w)", r"were[ \t]+(?:they|it)", "otherwise",
    "hypothetical(?:ly)?", r"(?:would|could|might)(?:[ \t]+not|n't)?[ \t]+have")
#: a change of a score named as a thing: "a revision of … to 6" (as a label, "Correction: …", it is made)
_CORR_NOUN = words("correction", "revision", "amendment", "adjustment")
#: a verb that changes a score, in any form
_CORR_VERB = words(r"correct(?:s|ed|ing)?", r"revis(?:e|es|ed|ing)", r"amend(?:s|ed|ing)?", r"adjust(?:s|ed|ing)?",
                   r"lower(?:s|ed|ing)?", r"rais(?:e|es|ed|ing)", r"bump(?:s|ed|ing)?", r"chang(?:e|es|ed|ing)",
                   r"updat(?:e|es|ed|ing)")
#: what stands right before a change stated as made: the judge ("I lowered"), an auxiliary of the present or
#: past ("I'm lowering", "is revised", "has been raised") or nothing but a stop (a label: "Revised: 6")
_DONE_BEFORE = re.compile(
    r"(?i)(?:^|[:;,(—–\-*_\"'])[ \t*_\"']*$|(?<![a-z'’])(?:i|we|i['’]m|i['’]ve|we['’]re|we['’]ve|am|are|is|was|were"
    r"|been|has|have|had)[ \t]+$")


def _made_change(sent: str) -> bool:
    return any(_DONE_BEFORE.search(sent, max(0, m.start() - 12), m.start()) for m in _CORR_VERB.finditer(sent))


def _stated_as_final(sent: str, value_at: int, moved: bool) -> bool:
    """A correction sets its value only when stated as made: the last score-changing verb before the value
    (or, where a change moves it "to 6", noun) is in a definite form ("I'm lowering it to 6", "I lowered",
    "revised to 6", "Correction: …"), or there is none ("should be 6, not 8", "a 6 rather than 8"). A change
    only weighed, wished or planned ("I weighed lowering it to 6", "tempted to lower", "I'd lower", "a
    revision of it to 6") is not."""
    verbs = sorted([*_CORR_VERB.finditer(sent, 0, value_at), *(_CORR_NOUN.finditer(sent, 0, value_at) if moved else ())],
                   key=lambda m: m.start())
    return not verbs or bool(_DONE_BEFORE.search(sent, max(0, verbs[-1].start() - 12), verbs[-1].start()))


#: a correction verb the sentence denies: "I would not lower it", "won't change", "never revised"
_NEGATED_VERB = re.compile(r"(?i)(?:(?<![a-z])(?:not|never)|n't)(?:[ \t]+\w+){0,1}[ \t]*$")
_NEGATION = words("not", "never", "no", "nor", "won't", "wouldn't", "didn't", "don't", "shouldn't", "cannot", "can't")
_SCORE_TALK = re.compile(r"(?i)(?<![a-z])(?:scores?|scored|scoring|rating|rated|grade|marks?|points|i|i'd|i'll|i've|i'm|my|me|we)(?![a-z])|/[ \t]*10")


#: a real judgment names each criterion a few times; past this many mentions a reply is not one, and
#: reading stops (keeps hostile input fast)
_MAX_MENTIONS = 2000


class TextReader(TableReading):
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
        self.third = False  # in a third party's section ("## Team C"): its numbers are its own
        self.recent: list[str] = []
        #: "8 — Principle articulation" lines, held until their block ends (see flush_reversed)
        self.reversed: list[tuple[str | None, str, Val, Ctx]] = []  # the last few non-empty lines (for "Revised table:" above a table)

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
            self.line(raw)
            if raw.strip() and self.mentions_left > 0 and not (self.third and self.st.team is None):
                self.col.loose += loose_numbers(raw, at, self.rx, self.st.team, self.st.crit, CRITERIA)
            if raw.strip():
                self.recent.append(raw)
                del self.recent[:-3]
        if table:
            self.table(table)
        self.flush_reversed()
        for key in ("a", "b"):
            body = "\n".join(self.labelled[key] or self.buffers[key]).strip()
            if body:
                self.col.justification[key].append(body)
        body = "\n".join(self.buffers["overall"]).strip()
        if body:
            self.col.overall.append(body)

    def line(self, raw: str) -> None:
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
        third = _THIRD_RE.search(clean)

        if not crits and not heading and self._initials_line(clean, teams, lead):
            return
        if not heading and len(crits) == 1 and _LIST_MARK.fullmatch(clean, 0, crits[0].start()) \
                and _LIST_MARK.fullmatch(clean, crits[0].end()):
            # a line that is a criterion's name and nothing else ("  - Consistency", "Principle articulation")
            # heads what follows it, like a heading: "- Score: 7", ": Team A 8 — Team B 7"
            self.st.crit = crit_name(crits[0].group(0))
            self.st.pair = None
            return
        if crits and (_CORR_LANG.search(clean) or _INSTEAD.search(clean)) and self._prose_corrections(clean):
            return  # "Team A's consistency should be 5, not 7": read as a correction, nothing else
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
                    and not (self.st.corrective or SECTION_PART.search(clean)) \
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
            scored = self._criteria_line(clean, crits, teams) or scored
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

    def _initials_line(self, clean: str, teams: list[re.Match[str]], lead: str | None) -> bool:
        """"Team A: PA 8, C 7, SR 6, UI 7, FA 8, IH 9, CE 7": three or more different criteria by their
        initials, each with its score right after it, for the line's (or the section's) team."""
        if not any(ch.isupper() for ch in clean):
            return False
        found = [(INITIALS[m.group("ini")], m) for m in _INITIAL_SCORE.finditer(clean)
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

    def _prose_corrections(self, clean: str) -> bool:
        """Sentences that correct a score: "Team A's consistency should be 5, not 7", "I'd revise Team B's
        framework awareness to 8", "Correction: consistency (Team A) from 7 to 5". Each needs one criterion,
        one team (or the section's team) and correction language about a score."""
        found = False
        for sm in re.finditer(r"[^.!?;]+(?:[.!?;](?=\d)[^.!?;]*)*[.!?;]?", clean):
            sent = sm.group(0)
            lang = _CORR_LANG.search(sent) or _INSTEAD.search(sent)
            if not lang:
                continue
            if _HYPOTHETICAL.search(sent) or _NEGATED_VERB.search(sent, 0, lang.start()):
                continue  # "I'd raise it to 9 if they had ...", "I would not lower it to 5": no correction
            crits = {crit_name(m.group(0)) for m in CRIT_RE.finditer(sent)}
            tms = list(self.rx.finditer(sent))
            teams = {team_of_match(m) for m in tms}
            if not teams:
                teams = {m.group(1).lower() for m in _BARE_MENTION.finditer(sent)}  # "A's", "B (responding)"
            if not teams and self.st.team is not None and OPPONENT_RE.search(sent):
                teams = {other(self.st.team)}  # "the other team's consistency should be 4" in A's section
            if len(crits) != 1 or len(teams) > 1 or _THIRD_RE.search(sent):
                continue
            team = teams.pop() if teams else self.st.team
            target, moved = None, False
            for rx, needs_talk in _CORR_TARGETS:
                for m in rx.finditer(sent):
                    if m.start("num") < lang.start() and rx is not _CORR_TARGETS[0][0]:
                        continue
                    # ("Team A's consistency is lowered to 6": a change stated as made speaks of a score)
                    if needs_talk and not (_SCORE_TALK.search(sent) or _made_change(sent)):
                        continue
                    if skipped(sent, m.start("num"), m.end("num")):
                        continue
                    target, moved = m, needs_talk
                    break
                if target:
                    break
            if target is None:
                continue
            # a change only weighed ("I weighed lowering it to 6", "I'd lower it: a 6, not 8"): no value is sure
            if team is not None and not _stated_as_final(sent, target.start("num"), moved):
                # a change thought of, not made: neither the old value nor the new one is sure
                self.col.hedges.setdefault((team, crits.pop()), (sent.strip(), self.col.ctx.pos + sm.start()))
                found = True
                continue
            if team is None:
                # a correction of a score, but of whose? Both teams' scores on it need a person
                self.col.doubts.append((crits.pop(), sent.strip()))
                found = True
                continue
            v = val_of(target, corrective=True)
            value, problem = interpret(v)
            self.col.ctx = Ctx(pos=self.col.ctx.pos + sm.start() if sent in self.col.ctx.source else self.col.ctx.pos,
                                source=sent.strip(), clean=sent, kind="correction", corrective=True,
                                via=via_of(tms) if tms else self.st.via)
            self.col.add(team, crits.pop(), Found(v.shown(), value, problem, kind="correction", corrective=True),
                         "lines")
            found = True
        return found

    def _scores_in(self, clean: str, start: int = 0) -> list[Val]:
        """The numbers after `start` that could be scores: not a rubric's anchors, the scale, a question..."""
        blank = lambda m: " " * len(m.group(0))  # noqa: E731 - same length, so positions hold
        clean = self.rx.sub(blank, _SCALE_NOTE.sub(blank, clean))  # "Team 1" holds no score
        return [val_of(n) for n in NUM_RE.finditer(clean, start) if not skipped(clean, n.start("num"), n.end())]

    def _leading_team(self, clean: str, teams: list[re.Match[str]]) -> tuple[str | None, int]:
        """A line that starts by naming a team as a label: "Team A:", "Team B (gpt-4o) -", "Team A", "B:".
        Returns the team and where its name ends."""
        if teams and not re.search(r"[A-Za-z0-9]", clean[: teams[0].start()]):  # "🟦 TEAM A", "- Team A"
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
            if team is not None and _THIRD_RE.search(clean, since, cm.start()):  # (no team: nothing to undo)
                team = None
            if idx and _CORR_LANG.search(clean, crits[idx - 1].end(), cm.start()):
                v = Val(v.num, v.den, v.upper, v.start, True)  # "7 … actually, Consistency: 6"
            self.col.add_val(team, crit, v, "lines", via=via)
            scored = True
        return scored

    def _paragraph_team(self, segment: str, owner: str | None) -> str | None:
        """The team a paragraph under a criterion's label is about, where it names one team only (the section's,
        if any) and no opponent or third party: "**Principle articulation.** Team A's principle … Score: 8"."""
        # a team named in the possessive ("rather than engage Team B's case") owns a thing, not the paragraph
        named = {team_of_match(m) for m in self.rx.finditer(segment) if not re.match(r"['’]s(?![a-z])", segment[m.end():])}
        named = named or ({owner} if owner is not None else set())
        if len(named) != 1 or (owner is not None and named != {owner}) or _THIRD_RE.search(segment):
            return None
        return named.pop()

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
