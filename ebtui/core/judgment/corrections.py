"""Corrections in a judge's sentences: which sentence changes a score, to what, and whether the change is
stated as made (see docs/JUDGMENT.md, section 2)."""

from __future__ import annotations

import re

from ebtui.core.judgment.provenance import Collector, Ctx, Found, TextState
from ebtui.core.judgment.vocabulary import (
    CRIT_RE,
    DEN,
    NOT_COUNT,
    NUM,
    OPPONENT_RE,
    crit_name,
    interpret,
    other,
    skipped,
    team_of_match,
    val_of,
    via_of,
    words,
)

# a team the round does not have: "Team C", "Team 3", "the previous team", "another team"
# (the round has two teams: Team A / B, 1 / 2, One / Two, and "the other team" is the opponent, not a third)
THIRD_RE = re.compile(
    r"(?i)(?<![a-z0-9])team(?:[ \t_-]+(?:[c-z]|three|four|five)|[ \t_-]*(?:[03-9]|\d{2}))(?![a-z0-9])"
    r"|(?<![a-z])(?:previous|another|third|earlier|prior|hypothetical|last|former|different|past|fictional)"
    r"[ \t]+(?:team|side|group|debater|presenter|respondent|round)s?(?![a-z])"
)
# language that makes a later value a correction of an earlier one
CORR_LANG = words(
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
# a team named by its bare letter inside a sentence: "A's consistency", "B (responding)"
BARE_MENTION = re.compile(r"(?<![A-Za-z0-9])([AB])(?:['’]s(?![a-z])|[ \t]*\((?:present|respond)[a-z]*\))")
# a value set against the one it replaces: "deserves a 6 rather than 8", "a 5 instead of the 7", "6, not 8"
INSTEAD = re.compile(rf"(?i){_CN}[ \t]*,?[ \t]*(?:rather[ \t]+than|instead[ \t]+of|not)[ \t]+(?:a[ \t]+|an[ \t]+|the[ \t]+)?\d")
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


class CorrectionReading:
    """The corrections half of the text reader (TextReader): sentences that change a score."""

    col: Collector
    rx: re.Pattern[str]
    st: TextState

    def prose_corrections(self, clean: str) -> bool:
        """Sentences that correct a score: "Team A's consistency should be 5, not 7", "I'd revise Team B's
        framework awareness to 8", "Correction: consistency (Team A) from 7 to 5". Each needs one criterion,
        one team (or the section's team) and correction language about a score."""
        found = False
        for sm in re.finditer(r"[^.!?;]+(?:[.!?;](?=\d)[^.!?;]*)*[.!?;]?", clean):
            sent = sm.group(0)
            lang = CORR_LANG.search(sent) or INSTEAD.search(sent)
            if not lang:
                continue
            if _HYPOTHETICAL.search(sent) or _NEGATED_VERB.search(sent, 0, lang.start()):
                continue  # "I'd raise it to 9 if they had ...", "I would not lower it to 5": no correction
            crits = {crit_name(m.group(0)) for m in CRIT_RE.finditer(sent)}
            tms = list(self.rx.finditer(sent))
            teams = {team_of_match(m) for m in tms}
            if not teams:
                teams = {m.group(1).lower() for m in BARE_MENTION.finditer(sent)}  # "A's", "B (responding)"
            if not teams and self.st.team is not None and OPPONENT_RE.search(sent):
                teams = {other(self.st.team)}  # "the other team's consistency should be 4" in A's section
            if len(crits) != 1 or len(teams) > 1 or THIRD_RE.search(sent):
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
