"""The judge-reply reader, tested by generation: layouts x distractors x team names x corrections x cuts.

A reply is composed from a planted truth (seven scores per team, some withheld: the place where a score would
stand holds only a number that is not one). It is laid out as JSON, nested JSON, a list of team objects,
tables of several shapes, labelled lines, lines under criterion headings, a YAML-like list or pairs under a
heading naming both teams, with the teams named as Team A/B, Team 1/2, Team One/Two, "A (presenting)" or
their model ids, in either order. Distractors are mixed in: counts, percentages, other scales, weights and
weighted products, maxima, rubric anchors, list numbering, numbered items, questions, negations, a third
party, a correction, a cut. The contract:

- every cell read is the truth (the corrected value, where the judge corrected one) or missing;
- a missing cell is flagged, by an item naming that cell;
- a reply with no distractor, no withheld score, no correction and no guess is read in full and not flagged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebtui.core.judgment import parse_judgment
from ebtui.core.judgment.vocabulary import CRIT_RE, scoring_word, team_regex
from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment

#: the default run: deterministic (CI) and few (its time is at its limit); each test has a -m slow twin with many
FAST = settings(max_examples=60, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow])
THOROUGH = settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

LABELS = [CRITERION_LABELS[c] for c in CRITERIA]
SHORT = ["Principle", "Consistency", "Stakeholders", "Uncertainty", "Frameworks", "Honesty", "Engagement"]
IDS = ("orca-7b-chat", "heron-2.5-pro")

#: how the two teams may be named: (team A, team B, ids to pass, whether naming them so is a guess)
NAMINGS = [
    ("Team A", "Team B", (None, None), False),
    ("Team 1", "Team 2", (None, None), False),
    ("Team One", "Team Two", (None, None), False),
    ("A (presenting)", "B (responding)", (None, None), False),
    (IDS[0], IDS[1], IDS, True),  # by model id: read, and flagged so a person checks the attribution
]

#: text around the scores that holds numbers, none of them a score
ASIDES = [
    "They named {n} stakeholders and {m} frameworks.", "Roughly {n}0% of their time went to the rebuttal.",
    "On a 5-point sub-scale I would put their clarity at {s}/5.", "They cited {n} studies from 2019.",
    "Does this deserve a {n} for them? Not quite, I think.", "Their Principle {m} (autonomy) clashed with stakeholder {n} (the clinic).",
    "I would not call this a {n}.", "Rubric: 1 = absent, 5 = adequate, 10 = exemplary.",
    "The previous team, in round {m}, earned a {n} on consistency.", "Scores below are out of 10; weights are equal.",
    "Option {m} was weighed against option {n}.",
]
#: what may stand where a score would, without being one (the score is then missing)
NOT_A_SCORE = ["{n}0%", "{n}/5", "{n}-{m}", "{n}.5", "n/a", "{n} of 12 checks", "not a {n}", "a {n}? Unclear",
               "{n} stakeholders", "2019", "—"]

# Real English words (wordfreq's most frequent, classed by lemminflect's lexicon, as in
# test_judgment_accounting.py), so no rule can exclude them by their spelling: a count names things ("3 cases",
# "2 named rivals"), a score may be the subject of a verb ("8 encourages them", "8 seems apt"), and a correction
# is made or only weighed. A word is drawn for a class only where it has no other (a plural noun that is no verb:
# "3 suits" would be a count and a score), and never names a criterion, a team or a score's unit.
wordfreq = pytest.importorskip("wordfreq", reason="the word list comes from wordfreq (the test extra)")
lemminflect = pytest.importorskip("lemminflect")
_NUMBER_WORDS = {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "half"}


@lru_cache(maxsize=1)
def word_classes() -> dict[str, list[str]]:
    """Words of one class only: plural nouns ("noun_pl"), verbs ending in -s, -ed and bare, adjectives, adverbs."""
    rx = team_regex("", "")
    out: dict[str, list[str]] = {k: [] for k in ("noun_pl", "verb_s", "verb_ed", "verb", "adj", "adv")}
    for w in wordfreq.top_n_list("en", 12000):
        if not w.isalpha() or not w.islower() or len(w) < 3 or w in _NUMBER_WORDS or CRIT_RE.search(w) \
                or rx.search(w) or scoring_word(w) or w in ("point", "points", "mark", "marks", "times"):
            continue
        pos = lemminflect.getAllLemmas(w)
        if len(pos) != 1:
            continue  # of two classes (or none): what it is would depend on the reader's guess
        (cls, lemmas), = pos.items()
        if cls == "NOUN" and w.endswith("s") and w not in lemmas:
            out["noun_pl"].append(w)
        elif cls == "VERB":
            key = "verb" if w in lemmas else "verb_s" if w.endswith("s") else "verb_ed" if w.endswith("ed") else ""
            if key:
                out[key].append(w)
        elif cls in ("ADJ", "ADV"):
            out[cls.lower()].append(w)
    return out


@cache
def _class_strategy(cls: str) -> st.SearchStrategy[str]:
    return st.sampled_from(word_classes()[cls])  # built once: sampled_from copies its list


def _word(draw: st.DrawFn, cls: str) -> str:
    return draw(_class_strategy(cls))


def _one(draw: st.DrawFn, *makers: Callable[[], str]) -> str:
    """One of the phrases, drawing only the words of the one chosen (the generator's time is the default run's)."""
    return draw(st.sampled_from(makers))()


def _pick(draw: st.DrawFn, fixed: list[str], cls: str) -> str:
    """A word from the list or, as often as any one of them, a real word of the class."""
    k = draw(st.integers(0, len(fixed)))
    return fixed[k] if k < len(fixed) else _word(draw, cls)


def count_phrase(draw: st.DrawFn, n: int) -> str:
    """A number that counts things, by a noun phrase of real words drawn on the spot: never a score."""
    def noun() -> str:
        return _word(draw, "noun_pl")
    return _one(
        draw,
        lambda: f"{n} {noun()}",
        lambda: f"{n} {_pick(draw, ['named', 'distinct', 'relevant', 'minor', 'stated'], 'adj')} {noun()}",
        lambda: f"{n} {_word(draw, 'verb_ed')} {noun()}",
        lambda: f"{n} {noun()} were named",
        lambda: f"{n} {noun()} and {n + 1} {noun()}",
        lambda: f"{n} {noun()} in the {noun()}",
        lambda: f"{n} were {_word(draw, 'verb_ed')}",
        lambda: f"{n} {_word(draw, 'verb_ed')} the {noun()}",
        lambda: f"{n} {noun()} the team {_word(draw, 'verb_ed')}",
        lambda: f"{n} {noun()} that {_word(draw, 'verb')} well",
    )


def verb_phrase(draw: st.DrawFn, v: int) -> str:
    """A score as the subject of a verb: a singular verb with an object, or a copula or modal."""
    def obj() -> str:
        return draw(st.sampled_from(["them", "him", "us", "me", "themselves"]))
    return _one(
        draw,
        lambda: f"{v} {_pick(draw, ['suits', 'fits', 'serves', 'rewards', 'credits', 'matches'], 'verb_s')} {obj()}"
                f"{draw(st.sampled_from(['', ' ' + _pick(draw, ['well', 'fairly', 'on balance'], 'adv')]))}",
        lambda: f"{v} {draw(st.sampled_from(['is', 'seems', 'appears', 'remains', 'feels']))} "
                f"{_pick(draw, ['apt', 'fair', 'right', 'generous'], 'adj')}",
        lambda: f"{v} {draw(st.sampled_from(['would', 'should']))} {_word(draw, 'verb')} {obj()}",
    )


#: a score-changing verb: (base, -ing, past)
CHANGES = [("lower", "lowering", "lowered"), ("raise", "raising", "raised"), ("revise", "revising", "revised"),
           ("change", "changing", "changed"), ("adjust", "adjusting", "adjusted"), ("bump", "bumping", "bumped"),
           ("update", "updating", "updated"), ("correct", "correcting", "corrected")]


def correction(draw: st.DrawFn, who: str, crit: str, new: int, old: int) -> tuple[str, str]:
    """A sentence about changing `who`'s `crit` from `old` to `new`, and what it does: "final" (the change is
    stated as made: the new value holds), "hedged" (only weighed, wished or planned: neither value is sure,
    so the cell is missing and flagged) or "conditional" (a counterfactual: the old value stands)."""
    base, ing, past = draw(st.sampled_from(CHANGES))
    obj = f"{who}'s {crit}"
    kind = draw(st.sampled_from(["final", "hedged", "conditional"]))
    pre = _one(draw, lambda: "", lambda: "On reflection, ",
               lambda: f"Having {_word(draw, 'verb_ed')} the {_word(draw, 'noun_pl')} again, ")
    if kind == "final":
        frame = draw(st.sampled_from([f"I'm {ing} {obj} to {new}.", f"I am {ing} {obj} to {new}, not {old}.",
                                      f"I {past} {obj} to {new}.", f"I have {past} {obj} from {old} to {new}.",
                                      f"{obj} is {past} to {new}.", f"{obj} has been {past} to {new} in my scores."]))
    elif kind == "hedged":
        def thought() -> str:
            return _pick(draw, ["weighed", "pondered", "floated", "entertained"], "verb_ed")
        frame = _one(
            draw,
            lambda: f"I {thought()} {ing} {obj} to {new}.",
            lambda: f"I was {_pick(draw, ['tempted', 'inclined'], 'verb_ed')} to {base} {obj} to {new}, but it stays.",
            lambda: f"I'd {base} {obj} to a {new}, not {old}.",
            # (only an adverb that says the change was not made: "I finally lowered" would make it)
            lambda: f"I {draw(st.sampled_from(['almost', 'nearly', 'very nearly']))} {past} {obj} to {new}.",
            lambda: f"I{draw(st.sampled_from([chr(39) + 'd', ' might', ' could', ' will', chr(39) + 'll']))}"
                    f" {base} {obj} to {new}.",
            lambda: f"I {thought()} a {base} of {obj} to {new}.",
        )
    else:
        frame = f"Had {who} {_word(draw, 'verb_ed')} the {_word(draw, 'noun_pl')}, I would have {past} {obj} to {new}."
    return pre + frame, kind


@dataclass
class Reply:
    text: str
    truth: dict[str, list[int | None]]
    ids: tuple[str | None, str | None]
    clean: bool  # no distractor, no withheld score, no correction, no guess: read in full, unflagged
    corrected: list[tuple[str, int]] = field(default_factory=list)
    before: dict[tuple[str, int], int] = field(default_factory=dict)  # what a correction replaced
    notes: list[str] = field(default_factory=list)


def _cell(draw: st.DrawFn, v: int | None, fmt: str = "{v}") -> str:
    if v is not None:
        return fmt.format(v=v)
    if draw(st.booleans()):
        return count_phrase(draw, draw(st.integers(1, 9)))
    return draw(st.sampled_from(NOT_A_SCORE)).format(n=draw(st.integers(1, 9)), m=draw(st.integers(1, 9)))


def _json_value(draw: st.DrawFn, v: int | None) -> object:
    if v is not None:
        return draw(st.sampled_from([v, str(v), f"{v}/10"]))
    return draw(st.sampled_from([None, "n/a", f"{draw(st.integers(1, 9))}/5", f"{draw(st.integers(1, 9))}.5",
                                 f"{draw(st.integers(11, 99))}"]))


@st.composite
def replies(draw: st.DrawFn, allow_distractors: bool = True) -> Reply:
    withheld = allow_distractors and draw(st.booleans())
    truth: dict[str, list[int | None]] = {}
    for t in ("a", "b"):
        vals: list[int | None] = list(draw(st.lists(st.integers(1, 10), min_size=7, max_size=7)))
        if withheld:
            vals = [None if draw(st.integers(0, 6)) == 0 else v for v in vals]
        truth[t] = vals
    name_a, name_b, ids, guess = draw(st.sampled_from(NAMINGS))
    names = {"a": name_a, "b": name_b}
    order = draw(st.permutations(["a", "b"]))
    layout = draw(st.sampled_from(["json", "json_criterion_major", "json_team_list", "table_team_columns",
                                   "table_per_team", "table_criterion_columns", "lines", "criterion_headings",
                                   "yaml", "pairs", "prose"]))
    distract = allow_distractors and draw(st.booleans())
    notes = [layout, f"names={names}", f"order={order}"]
    ambiguous = False
    hedged = False  # a conditional correction: the old value stands (a person may be asked)

    def aside() -> str:
        if not distract:
            return "A careful exchange on both sides."
        return draw(st.sampled_from(ASIDES)).format(n=draw(st.integers(1, 9)), m=draw(st.integers(1, 9)),
                                                     s=draw(st.integers(1, 5)))

    out: list[str] = [f"Here is my evaluation. {aside()}", ""]
    if layout.startswith("json"):
        key = {"a": "team_a", "b": "team_b"} if names["a"] == "Team A" else names
        if layout == "json":
            obj: dict[str, object] = {}
            for t in order:
                team_obj: dict[str, object] = {"scores": {c: _json_value(draw, v) for c, v in zip(CRITERIA, truth[t], strict=True)},
                                               "justification": aside()}
                if distract:
                    team_obj["num_stakeholders"] = draw(st.integers(1, 9))
                    team_obj["max_score"] = 10
                obj[key[t]] = team_obj
        elif layout == "json_criterion_major":
            obj = {"scores": {c: {key[t]: _json_value(draw, truth[t][i]) for t in order} for i, c in enumerate(CRITERIA)}}
        else:
            obj = {"teams": [{"team": names[t], "scores": [{"criterion": LABELS[i], "score": _json_value(draw, truth[t][i])}
                                                           for i in range(7)]} for t in order]}
        obj["overall_analysis"] = aside()
        out.append("```json\n" + json.dumps(obj, indent=2) + "\n```")
    elif layout == "table_team_columns":
        extra = draw(st.sampled_from(["", "Max", "Weight", "Out of", "Rank"])) if distract else ""
        weighted = distract and draw(st.booleans())
        head = ["Criterion"] + ([extra] if extra else [])
        for t in order:
            head.append(names[t])
            if weighted:
                head.append(f"{names[t]} (weighted)")
        rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for i in range(7):
            cells = [f"{i + 1}. {LABELS[i]}" if distract else LABELS[i]]
            if extra:
                cells.append({"Max": "10", "Weight": "1.0", "Out of": "10", "Rank": str(i + 1)}[extra])
            for t in order:
                cells.append(_cell(draw, truth[t][i], draw(st.sampled_from(["{v}", "**{v}**", "{v}/10"]))))
                if weighted:
                    cells.append(f"{(truth[t][i] or 0) * 1.5:.1f}")
            rows.append("| " + " | ".join(cells) + " |")
        if distract:
            rows.append("| Total | " + ("70 | " if extra else "") + " | ".join(
                str(sum(v or 0 for v in truth[t])) + (" | x" if weighted else "") for t in order) + " |")
        out.append("\n".join(rows))
    elif layout == "table_per_team":
        prior = distract and draw(st.booleans())  # a draft column beside the final one (equal where both hold)
        score_head = "Final" if prior else draw(st.sampled_from(["Score", "Score (out of 10)", "Score /10",
                                                                 "Awarded", "Rating"]))
        for t in order:
            out.append(f"### {names[t]}")
            head = ["Criterion"] + (["Out of"] if distract else []) + (["Draft"] if prior else []) + [score_head, "Justification"]
            rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for i in range(7):
                cells = [LABELS[i]] + (["10"] if distract else [])
                if prior:
                    cells.append(str(truth[t][i] or draw(st.integers(1, 10))))  # the same as the final one
                cells += [_cell(draw, truth[t][i]), aside()]
                rows.append("| " + " | ".join(cells) + " |")
            out.append("\n".join(rows))
            out.append("")
    elif layout == "table_criterion_columns":
        heads = draw(st.sampled_from([SHORT, ["PA", "C", "SR", "UI", "FA", "IH", "CE"]]))  # names or initials
        rows = ["| Team | " + " | ".join(heads) + " |", "|---|" + "---|" * 7]
        for t in order:
            rows.append(f"| {names[t]} | " + " | ".join(_cell(draw, v) for v in truth[t]) + " |")
        out.append("\n".join(rows))
    elif layout == "lines":
        for t in order:
            out.append(draw(st.sampled_from(["## {}", "**{}**", "{}:"])).format(names[t]))
            style = draw(st.integers(0, 5))
            for i in range(7):
                v = truth[t][i]
                out.append([f"- {LABELS[i]}: {_cell(draw, v, '{v}/10')}",
                            f"{i + 1}. {LABELS[i]} - {_cell(draw, v)}",
                            f"* **{SHORT[i]}:** {_cell(draw, v)} — {aside()}",
                            f"{LABELS[i]}: {_cell(draw, v, 'Strong ({v})') if v is None or v > 6 else _cell(draw, v, 'Fair ({v})')}",
                            f"- {LABELS[i]} — {_cell(draw, v, '{v} is fair')}.",
                            f"- {LABELS[i]}: {_cell(draw, v, verb_phrase(draw, v or 1))}."][style])
            out.append(f"Justification: {aside()}")
            out.append("")
    elif layout == "criterion_headings":
        for i in range(7):
            anchor = " (1 = absent, 10 = exemplary)" if distract and draw(st.booleans()) else ""
            out.append(f"### {LABELS[i]}{anchor}")
            for t in order:
                out.append(f"- {names[t]}: {_cell(draw, truth[t][i], '{v}/10')} – {aside()}")
            out.append("")
    elif layout == "yaml":
        for t in order:
            out.append(f"{names[t]}:")
            for i, c in enumerate(CRITERIA):
                out.append(f"  {c}: {_cell(draw, truth[t][i])}")
        out.append("")
    elif layout == "prose":  # a sentence per criterion: read, and flagged (a sentence is a guess)
        for t in order:
            out.append(f"{names[t]} did the following.")
            for i in range(7):
                v = truth[t][i]
                said = f"earns a {v}" if v is not None else draw(st.sampled_from(
                    ["earns a solid mark", f"named {draw(st.integers(2, 9))} stakeholders",
                     f"might deserve a {draw(st.integers(1, 9))}? Hard to say"]))
                out.append(f"On {LABELS[i].lower()}, {names[t]} {said}.")
            out.append("")
    else:  # pairs under a heading naming both teams, in the order given there
        sep = draw(st.sampled_from([" / ", " | ", " vs "]))
        out.append(f"**Scores ({names[order[0]]}{sep}{names[order[1]]})**")
        for i in range(7):
            x, y = truth[order[0]][i], truth[order[1]][i]
            if x is None or y is None:  # a withheld score: the line says so in words
                out.append(f"- {LABELS[i]}: " + sep.join("no score" if v is None else str(v) for v in (x, y)))
            else:
                out.append(f"- {LABELS[i]}: {x}{sep}{y}")
                # "7 / 10" under "(A / B)" is a pair or seven out of ten: left to a person
                ambiguous = ambiguous or (sep == " / " and y == 10)
        out.append("")
    corrected: list[tuple[str, int]] = []
    before: dict[tuple[str, int], int] = {}
    if allow_distractors and draw(st.booleans()):
        # a correction of one given score, in prose, after the scores: the corrected value is the truth
        t = draw(st.sampled_from(["a", "b"]))
        i = draw(st.integers(0, 6))
        if truth[t][i] is not None:
            new = draw(st.integers(1, 10).filter(lambda n: n != truth[t][i]))
            sentence, kind = correction(draw, names[t], LABELS[i].lower(), new, truth[t][i])  # type: ignore[arg-type]
            out.append(sentence)
            notes.append(f"correction: {kind}")
            before[(t, i)] = truth[t][i]  # type: ignore[assignment]
            if kind != "conditional":
                truth[t][i] = new if kind == "final" else None  # a weighed change: missing and flagged
                corrected.append((t, i))
            else:
                hedged = True
    if distract and draw(st.booleans()):
        out.append("\n## Team C (a hypothetical)\n" + "\n".join(f"{LABELS[i]}: {draw(st.integers(1, 10))}" for i in range(7)))
    out.append("")
    out.append(f"## Overall\n{aside()}")
    text = "\n".join(out)
    clean = not (withheld or distract or corrected or hedged or guess or ambiguous or layout == "prose")
    return Reply(text, truth, ids, clean, corrected, before, notes)


def check(r: Reply, j: Judgment, cut: bool = False) -> None:
    for t in ("a", "b"):
        got = list(j.parsed_scores(t).as_dict().values())  # type: ignore[arg-type]
        for i, crit in enumerate(CRITERIA):
            allowed = (None, r.truth[t][i]) + ((r.before[(t, i)],) if cut and (t, i) in r.before else ())
            assert got[i] in allowed, (r.notes, t, crit, got[i], r.truth[t][i], r.text)
            if got[i] is None:
                assert any(x.team == t and x.criterion == crit for x in j.review_items), (r.notes, t, crit, r.text)
    if r.clean and not cut:
        assert [j.team_a_scores.as_dict(), j.team_b_scores.as_dict()] == [
            dict(zip(CRITERIA, r.truth[t], strict=True)) for t in ("a", "b")], (r.notes, r.text)
        assert not j.needs_review, (r.notes, j.review_reasons, r.text)
    for t, i in r.corrected:
        assert any(x.team == t and x.criterion == CRITERIA[i] for x in j.review_items), (r.notes, j.review_reasons)


def _parse(r: Reply, text: str | None = None, finish_reason: str | None = None) -> Judgment:
    return parse_judgment(r.text if text is None else text, team_a_id=r.ids[0], team_b_id=r.ids[1],
                          finish_reason=finish_reason)


@FAST
@given(replies())
def test_every_cell_is_the_truth_or_missing_and_missing_is_flagged(r: Reply) -> None:
    check(r, _parse(r))


@FAST
@given(replies(allow_distractors=False))
def test_a_clean_reply_is_read_in_full_and_not_flagged(r: Reply) -> None:
    # (clean unless the teams are named by model id or a pair reads "7 / 10": both are read, and flagged)
    check(r, _parse(r))


@FAST
@given(replies(), st.data())
def test_a_reply_cut_anywhere_keeps_only_true_scores(r: Reply, data: st.DataObject) -> None:
    """Cut by the token limit: wherever the cut falls (often inside a number: "10" becomes "1"), every cell
    read is the truth or missing and flagged. With finish reason "length" and without it."""
    end = len(r.text) - len("\n## Overall\n") - 40
    at = data.draw(st.integers(0, max(0, end)))
    # cuts inside numbers are the dangerous ones: move most cuts to just after a digit
    if data.draw(st.booleans()):
        digits = [k + 1 for k, ch in enumerate(r.text[:end]) if ch.isdigit()]
        if digits:
            at = data.draw(st.sampled_from(digits))
    cut = r.text[:at]
    # Without a finish reason, a cut right after a number where the judge went on with something that made it
    # no score ("20%" cut to "2", "7.5" to "7", "4 stakeholders" to "4") cannot be told from a complete reply
    # by its text alone. Cuts inside a number ("10" to "1"), at a line's end or before "/10" can, and are
    # checked without it; with finish reason "length" every cut is checked.
    nxt = r.text[at:at + 3]
    inside_other = cut[-1:].isdigit() and bool(nxt) and not (nxt[0].isdigit() or nxt[0] == "\n" or nxt == "/10")
    for reason in ("length",) if inside_other else (None, "length"):
        j = _parse(r, cut, reason)
        check(Reply(cut, r.truth, r.ids, False, [], r.before, [*r.notes, f"cut at {at}", f"finish={reason}"]), j, cut=True)


@pytest.mark.slow
@THOROUGH
@given(replies())
def test_thorough_every_cell_is_the_truth_or_missing(r: Reply) -> None:
    check(r, _parse(r))


@pytest.mark.slow
@THOROUGH
@given(replies(allow_distractors=False))
def test_thorough_clean_replies_are_not_flagged(r: Reply) -> None:
    check(r, _parse(r))


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies(), st.data())
def test_thorough_a_reply_cut_anywhere_keeps_only_true_scores(r: Reply, data: st.DataObject) -> None:
    test_a_reply_cut_anywhere_keeps_only_true_scores.hypothesis.inner_test(r, data)  # type: ignore[attr-defined]


TABLE = "| Criterion | Team A | Team B |\n|---|---|---|\n" + "".join(f"| {lab} | 8 | 7 |\n" for lab in LABELS)


@FAST
@given(st.data(), st.integers(0, 6), st.sampled_from(["a", "b"]), st.integers(1, 10))
def test_a_correction_settles_a_score_only_when_stated_as_made(data: st.DataObject, i: int, t: str, new: int) -> None:
    _check_correction(data, i, t, new)


@pytest.mark.slow
@THOROUGH
@given(st.data(), st.integers(0, 6), st.sampled_from(["a", "b"]), st.integers(1, 10))
def test_thorough_corrections_in_real_words(data: st.DataObject, i: int, t: str, new: int) -> None:
    _check_correction(data, i, t, new)


def _check_correction(data: st.DataObject, i: int, t: str, new: int) -> None:
    """Made ("I'm lowering …", "is revised to …"): the new value, flagged as a correction. Weighed, wished or
    planned, by any verb ("I considered lowering …", "tempted to lower …", "I'd lower …"): missing, flagged as a
    conflict. A counterfactual ("Had they …, I would have raised …"): no correction, but a second value for the
    cell all the same: missing, flagged as a conflict (the same value again: the old value, unflagged)."""
    old = 8 if t == "a" else 7
    sentence, kind = correction(data.draw, f"Team {t.upper()}", LABELS[i].lower(), new, old)
    j = parse_judgment(TABLE + "\n" + sentence + "\n")
    got = j.parsed_scores(t).as_dict()[CRITERIA[i]]  # type: ignore[arg-type]
    flags = [x.kind for x in j.review_items if x.team == t and x.criterion == CRITERIA[i]]
    if new == old and kind in ("final", "conditional"):
        assert got == old, (sentence, got)
    elif kind == "final":
        assert (got, flags) == (new, ["correction"]), (sentence, j.review_reasons)
    else:
        assert (got, flags) == (None, ["conflict"]), (sentence, j.review_reasons)
    others = [x for x in j.review_items if (x.team, x.criterion) != (t, CRITERIA[i])]
    assert not others, (sentence, j.review_reasons)


@FAST
@given(st.data(), st.integers(1, 10), st.integers(1, 9))
def test_a_number_is_a_count_when_a_plural_noun_follows_and_a_score_when_a_verb_does(
        data: st.DataObject, v: int, n: int) -> None:
    _check_count_or_verb(data, v, n)


@pytest.mark.slow
@THOROUGH
@given(st.data(), st.integers(1, 10), st.integers(1, 9))
def test_thorough_counts_and_verbs_in_real_words(data: st.DataObject, v: int, n: int) -> None:
    _check_count_or_verb(data, v, n)


def _check_count_or_verb(data: st.DataObject, v: int, n: int) -> None:
    lines = [f"- {lab}: {verb_phrase(data.draw, v)}" for lab in LABELS]
    k = data.draw(st.integers(0, 6))
    lines[k] = f"- {LABELS[k]}: {count_phrase(data.draw, n)}"
    j = parse_judgment("## Team A\n" + "\n".join(lines) + "\n\n## Team B\n" + "\n".join(lines) + "\n")
    for t in ("a", "b"):
        got = j.parsed_scores(t).as_dict()  # type: ignore[arg-type]
        assert [got[c] for c in CRITERIA] == [None if x == k else v for x in range(7)], ("\n".join(lines), got)
        assert [x.kind for x in j.review_items if x.team == t] == ["missing"], j.review_reasons
