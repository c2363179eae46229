"""Scores given by a structure other than one number per criterion's line (issue #37), generated.

Random truths; a random collective value and random exceptions, each with its own value; quantifiers and
exception markers drawn from their closed classes; both teams in one line (an edge, a tie); a topic's clauses;
references to another cell; the judge's plain "I'd give Team A a seven". Reasons are real words (wordfreq +
lemminflect, as test_judgment_accounting.py draws them). The invariants: every cell is the truth or missing
and flagged; a clean reply is read in full and not flagged; each danger (a collective value and a line that
disagree, an exception without a value, a reference to a conflict, a chain or a missing cell, a
counterfactual) ends missing and flagged.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebtui.core.judgment import parse_judgment
from ebtui.core.records import CRITERIA, Judgment
from tests.unit.judgment.test_judgment_accounting import (
    LABELS,
    NUMBER_WORDS,
    classes,
    flagged,
    truth_or_flagged,
    truths,
)

lemminflect = pytest.importorskip("lemminflect")

FEW = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
THOROUGH = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: closed classes, as a judge writes them
UNIVERSAL = ["on every criterion", "across the board", "throughout", "on all seven criteria", "in every category",
             "all round", "everywhere", "on each criterion", "for every dimension", "across the rubric"]
EXCEPT = ["except", "except for", "but", "save for", "apart from", "other than", "bar", "excluding",
          "with the exception of", "aside from"]
RESIDUAL = ["Everything else", "The rest", "All other criteria", "Remaining criteria", "All the others"]
SCORING = ["earns", "gets", "deserves", "merits", "receives"]


@lru_cache(maxsize=8)
def _plain(cls: str) -> list[str]:
    from ebtui.core.judgment.vocabulary import CRIT_RE, team_regex

    rx = team_regex("", "")
    closed = {"each", "every", "all", "both", "except", "but", "save", "bar", "apart", "aside", "other", "rest",
              "else", "elsewhere", "otherwise", "same", "like", "as", "equal", "match", "ditto", "even", "level",
              "apiece", "throughout", "everywhere", "across", "not", "never", "no", "if", "unless", "would",
              "could", "might", "should", "may", "must", "tied", "tie", "draw", "square", "piece", "parity"}
    return [w for w in classes()[cls] if not CRIT_RE.search(w) and not rx.search(w) and w not in closed
            and "AUX" not in lemminflect.getAllLemmas(w)]


@lru_cache(maxsize=1)
def _adjectives() -> list[str]:
    return [w for w in _plain("adj") if set(lemminflect.getAllLemmas(w)) == {"ADJ"}]


def adjective(draw: st.DrawFn) -> str:
    """An adjective that is nothing else ("a junior 1" counts juniors: the value is then an item's number)."""
    return draw(st.sampled_from(_adjectives()))


def plain(draw: st.DrawFn, cls: str) -> str:
    """A real word of the class that names no criterion or team and is of none of the closed classes used."""
    return draw(st.sampled_from(_plain(cls)))


def reason(draw: st.DrawFn) -> str:
    """A sentence of real words, no number in it."""
    return (f"{plain(draw, 'noun').capitalize()} {plain(draw, 'verb_ed')} {plain(draw, 'adv')} "
            f"{plain(draw, 'noun_pl')} {plain(draw, 'adj')}.")


def exact(j: Judgment, truth: dict[str, list[int]], text: str) -> None:
    got = [j.parsed_scores(t).as_dict()[c] for t in ("a", "b") for c in CRITERIA]  # type: ignore[arg-type]
    assert got == [v for t in ("a", "b") for v in truth[t]], (text, j.review_reasons)
    assert not j.needs_review, (text, j.review_reasons)


def missing_and_flagged(j: Judgment, team: str, crit: str, text: str) -> None:
    assert j.parsed_scores(team).as_dict()[crit] is None, (team, crit, text, j.review_reasons)  # type: ignore[arg-type]
    assert flagged(j, team, crit), (team, crit, text)


# ------------------------------------------------------------------------ one value for many criteria


@st.composite
def collective_truths(draw: st.DrawFn) -> tuple[dict[str, list[int]], dict[str, int], dict[str, dict[int, int]]]:
    """Per team a collective value and up to three exceptions, each with a value of its own."""
    base, exc, truth = {}, {}, {}
    for t in ("a", "b"):
        v = draw(st.integers(1, 10))
        idx = draw(st.lists(st.integers(0, 6), max_size=3, unique=True))
        e = {i: draw(st.integers(1, 10).filter(lambda x, v=v: x != v)) for i in idx}
        base[t], exc[t], truth[t] = v, e, [e.get(i, v) for i in range(7)]
    return truth, base, exc


def _exception(draw: st.DrawFn, i: int, x: int) -> str:
    name = LABELS[i].lower()
    return draw(st.sampled_from([f"{name} ({x})", f"{name}, where it {draw(st.sampled_from(SCORING))} a {x}",
                                 f"{name} at {x}", f"{name} (a {x})"]))


def _collective_text(draw: st.DrawFn, base: dict[str, int], exc: dict[str, dict[int, int]]) -> str:
    out = []
    for t in draw(st.permutations(["a", "b"])):
        v, e = base[t], exc[t]
        head = draw(st.sampled_from(["## Team {T}\n", "**Team {T}** — ", "Team {T}: ", "### Team {T}\n"])).format(
            T=t.upper())
        style = draw(st.integers(0, 3 if e else 2))
        if style == 3 or (style == 2 and e):
            # the exceptions on lines of their own, then the rest in one
            lines = [f"- {LABELS[i]}: {x}" for i, x in e.items()] + [f"- {draw(st.sampled_from(RESIDUAL))}: {v}"]
            out.append((head if head.endswith("\n") else f"## Team {t.upper()}\n") + "\n".join(lines))
        else:
            q = draw(st.sampled_from(UNIVERSAL))
            value = f"{v} {q}" if style == 0 or v == 10 else draw(st.sampled_from([f"all {v}s", f"{v}s {q}"]))
            if e:
                parts = [_exception(draw, i, x) for i, x in e.items()]
                listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
                marker = draw(st.sampled_from(EXCEPT))
                line = draw(st.sampled_from([f"{value}, {marker} {listed}.",
                                             f"{marker.capitalize()} {listed}, {value}."]))
            else:
                line = f"{value}."
            out.append(head + line[0].upper() + line[1:] if head.endswith("\n") else head + line)
        out.append(reason(draw))
    return "\n\n".join(out)


def _collective_clean(data: st.DataObject) -> None:
    truth, base, exc = data.draw(collective_truths())
    text = _collective_text(data.draw, base, exc)
    exact(parse_judgment(text), truth, text)


@FEW
@given(st.data())
def test_one_value_for_every_criterion_but_named_exceptions_is_read_in_full(data: st.DataObject) -> None:
    _collective_clean(data)


@pytest.mark.slow
@THOROUGH
@given(st.data())
def test_thorough_collective_values(data: st.DataObject) -> None:
    _collective_clean(data)


def _collective_dangers(data: st.DataObject) -> None:
    """A collective value that a criterion's own line contradicts, or an exception with no value: that cell is
    missing and flagged, every other cell the truth or missing and flagged."""
    draw = data.draw
    truth, base, exc = draw(collective_truths())
    t = draw(st.sampled_from(["a", "b"]))
    i = draw(st.integers(0, 6).filter(lambda k: k not in exc[t]))
    other = draw(st.integers(1, 10).filter(lambda x: x != base[t]))
    kind = draw(st.sampled_from(["contradicted", "no value"]))
    q, marker = draw(st.sampled_from(UNIVERSAL)), draw(st.sampled_from(EXCEPT))
    lines = []
    for team in ("a", "b"):
        parts = [_exception(draw, k, x) for k, x in exc[team].items()]
        if team == t and kind == "no value":
            parts.append(LABELS[i].lower())  # an exception the reply gives no value
        listed = f", {marker} " + " and ".join(parts) if parts else ""
        lines.append(f"## Team {team.upper()}\n{base[team]} {q}{listed}.")
        if team == t and kind == "contradicted":
            lines.append(f"- {LABELS[i]}: {other}")
        lines.append(reason(draw))
    text = "\n\n".join(lines)
    j = parse_judgment(text)
    missing_and_flagged(j, t, CRITERIA[i], text)
    truth_or_flagged(j, truth, text)


@FEW
@given(st.data())
def test_a_collective_value_contradicted_or_an_exception_without_value_is_missing_and_flagged(
        data: st.DataObject) -> None:
    _collective_dangers(data)


@pytest.mark.slow
@THOROUGH
@given(st.data())
def test_thorough_collective_dangers(data: st.DataObject) -> None:
    _collective_dangers(data)


# ------------------------------------------------------------------------ both teams in one line


def _pair_line(draw: st.DrawFn, a: int, b: int) -> str | None:
    """A line giving both teams' values under a criterion's heading, or None where no form fits the values."""
    hi, lo = ("a", "b") if a >= b else ("b", "a")
    vals = {"a": a, "b": b}
    if a == b:
        return draw(st.sampled_from([f"Even: {a} apiece.", f"Both teams {draw(st.sampled_from(SCORING)).rstrip('s')} a {a}.",
                                     f"Level — {a} each."]))
    x, y = hi.upper(), lo.upper()
    return draw(st.sampled_from([
        f"Edge: Team {x}, {vals[hi]} to Team {y}'s {vals[lo]}.", f"Team {x} edges it {vals[hi]}–{vals[lo]}.",
        f"{x} takes it, {vals[hi]} against {vals[lo]}.", f"Team {x} {plain(draw, 'verb_s')} it, {vals[hi]} to {vals[lo]}.",
        f"Team {y}'s {vals[lo]} to Team {x}'s {vals[hi]}.",
    ]))


def _pairs(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    blocks = []
    for i in range(7):
        blocks.append(f"### {LABELS[i]}\n{reason(draw)}\n{_pair_line(draw, truth['a'][i], truth['b'][i])}")
    text = "\n\n".join(blocks) + f"\n\n### Overall analysis\n{reason(draw)}\n"
    exact(parse_judgment(text), truth, text)


@FEW
@given(truths, st.data())
def test_both_teams_in_one_line_with_an_edge_or_a_tie_are_read_in_full(truth: dict[str, list[int]],
                                                                          data: st.DataObject) -> None:
    _pairs(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_pairs(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _pairs(data, truth)


@pytest.mark.parametrize("line", [
    "Team B trails Team A, 6 to 8.",  # the second team named as the subject first: which value is whose is open
    "Edge: Team A, 6–8.",  # an ascending pair with a dash may be a range
    "Team A edges it 8 to 6, or 7 to 6 on a second look.",  # more values than a pair
    "I'd call it 8 to 6 for Team A if the rebuttal counted.",  # a condition
])
def test_a_pair_whose_reading_is_open_is_never_an_unflagged_value(line: str) -> None:
    text = f"### Consistency\n{line}\n\n### Overall analysis\nA close round.\n"
    j = parse_judgment(text)
    for t in ("a", "b"):
        v = j.parsed_scores(t).as_dict()["consistency"]  # type: ignore[arg-type]
        assert v is None or flagged(j, t, "consistency"), (t, v, j.review_reasons)


# ------------------------------------------------------------------------ a topic's clauses, a tally


def _topic(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    """"On consistency, Team A gets a steady seven, …; Team B gets a shakier six": a topic naming one criterion,
    then a clause per team whose verb gives the score, the value a number word after "a" and a modifier; and a
    tally of counts under a plural noun and a past participle ("Stakeholders named — A: 4, B: 6")."""
    draw = data.draw
    lines = [reason(draw)]
    for i in range(7):
        a, b = truth["a"][i], truth["b"][i]
        words = {t: NUMBER_WORDS[v - 1] if draw(st.booleans()) else str(v) for t, v in (("a", a), ("b", b))}
        if a == b and draw(st.booleans()):
            lines.append(f"On {LABELS[i].lower()}, both teams {draw(st.sampled_from(SCORING)).rstrip('s')} a "
                         f"{adjective(draw)} {words['a']}.")
            continue
        first, second = draw(st.permutations(["a", "b"]))
        lines.append(f"On {LABELS[i].lower()}, Team {first.upper()} {draw(st.sampled_from(SCORING))} a "
                     f"{adjective(draw)} {words[first]}, {plain(draw, 'verb_ing')} {plain(draw, 'noun_pl')}; "
                     f"Team {second.upper()} {draw(st.sampled_from(SCORING))} a {adjective(draw)} {words[second]}.")
    noun = draw(st.sampled_from(["Stakeholders", "Frameworks", "Principles", "Objections"]))
    lines.append(f"Tally:\n- {noun} {draw(st.sampled_from(['named', 'cited', 'identified', 'listed']))} — "
                 f"A: {draw(st.integers(1, 9))}, B: {draw(st.integers(1, 9))}")
    lines.append(f"Overall, {reason(draw)}")
    text = "\n\n".join(lines)
    exact(parse_judgment(text), truth, text)


@FEW
@given(truths, st.data())
def test_a_topic_sentence_giving_each_team_its_value_is_read_in_full(truth: dict[str, list[int]],
                                                                      data: st.DataObject) -> None:
    _topic(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_topic_sentences(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _topic(data, truth)


def _topic_any_verb(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    """The same with a verb of any kind ("Team A misses a 9"): the truth or missing and flagged."""
    draw = data.draw
    lines = []
    for i in range(7):
        lines.append(f"On {LABELS[i].lower()}, Team A {plain(draw, 'verb_s')} a {truth['a'][i]}; Team B "
                     f"{plain(draw, 'verb_s')} a {plain(draw, 'adj')} {NUMBER_WORDS[truth['b'][i] - 1]}.")
    text = "\n\n".join(lines)
    truth_or_flagged(parse_judgment(text), truth, text)


@FEW
@given(truths, st.data())
def test_a_topic_sentence_with_any_verb_is_the_truth_or_missing_and_flagged(truth: dict[str, list[int]],
                                                                              data: st.DataObject) -> None:
    _topic_any_verb(data, truth)


# ------------------------------------------------------------------------ references


def _references(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    """A few cells given as another cell's score (one read plainly, of the same team or the other): each takes
    that value, unflagged; the provenance says which cell it came from."""
    draw = data.draw
    refs: dict[tuple[str, int], tuple[str, int]] = {}
    for t in ("a", "b"):
        for i in draw(st.lists(st.integers(0, 6), max_size=3, unique=True)):
            same = [(t, k) for k in range(7) if k != i and truth[t][k] == truth[t][i]]
            across = [(u, i) for u in ("a", "b") if u != t and truth[u][i] == truth[t][i]]
            options = [c for c in same + across if c not in refs and (t, i) not in refs.values()]
            if options and not any(r == (t, i) for r in refs.values()):
                target = draw(st.sampled_from(options))
                if target not in refs:
                    refs[(t, i)] = target
    out = []
    for t in ("a", "b"):
        out.append(f"## Team {t.upper()}")
        for i in range(7):
            if (t, i) in refs:
                u, k = refs[(t, i)]
                own = "its " if draw(st.booleans()) else ""
                ref = (f"{draw(st.sampled_from(['same as', 'the same as', 'matches', 'equal to', 'identical to']))} "
                       f"{own}{LABELS[k].lower()}" if u == t else
                       f"{draw(st.sampled_from(['same as', 'equal to', 'matches']))} Team {u.upper()}'s")
                out.append(f"- {LABELS[i]}: {ref} — {plain(draw, 'noun_pl')} {plain(draw, 'verb_ed')}.")
            else:
                out.append(f"- {LABELS[i]}: {truth[t][i]}")
        out.append("")
    text = "\n".join(out)
    j = parse_judgment(text)
    exact(j, truth, text)
    for (t, i), (_u, k) in refs.items():
        src = j.source_of(t, CRITERIA[i])  # type: ignore[arg-type]
        assert src is not None and src.note.startswith("same as") and LABELS[k] in src.note, (src, text)


@FEW
@given(truths, st.data())
def test_a_score_by_reference_to_a_cell_read_plainly_is_that_value(truth: dict[str, list[int]],
                                                                     data: st.DataObject) -> None:
    _references(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_references(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _references(data, truth)


@pytest.mark.parametrize("lines,cell", [
    # a reference to a cell that is itself a conflict
    (["- Consistency: 6", "- Consistency: 8", "- Intellectual honesty: same as consistency"], "intellectual_honesty"),
    # a reference to a missing cell
    (["- Intellectual honesty: matches its framework awareness score"], "intellectual_honesty"),
    # a chain: honesty -> engagement -> consistency
    (["- Consistency: 7", "- Intellectual honesty: same as constructive engagement",
      "- Constructive engagement: same as consistency"], "intellectual_honesty"),
    # a cycle
    (["- Intellectual honesty: same as constructive engagement",
      "- Constructive engagement: same as intellectual honesty"], "constructive_engagement"),
    # "ditto" after a reference: a chain
    (["- Consistency: 7", "- Constructive engagement: same as consistency", "- Intellectual honesty: ditto"],
     "intellectual_honesty"),
    # a value read besides the reference that differs from it
    (["- Consistency: 7", "- Intellectual honesty: same as consistency", "Their intellectual honesty: 9"],
     "intellectual_honesty"),
])
def test_a_reference_that_cannot_be_resolved_is_missing_and_flagged(lines: list[str], cell: str) -> None:
    text = "## Team A\n" + "\n".join(lines) + "\n\n## Team B\n- Consistency: 5\n"
    missing_and_flagged(parse_judgment(text), "a", cell, text)


# ------------------------------------------------------------------------ the judge's conditional


@pytest.mark.parametrize("sentence,value", [
    ("I'd give Team A a seven here; the principle is clear.", 7), ("I would put Team A at six.", 6),
    ("I'd score Team A a nine, for the candour of its rebuttal.", 9), ("We'd give Team A an eight.", 8),
])
def test_the_judges_plain_statement_in_the_conditional_is_read_and_not_flagged(sentence: str, value: int) -> None:
    """In a paragraph under a criterion's label that speaks of the teams in turn (number words, as c10 writes)."""
    text = (f"**Principle articulation.** Team A names its principle. {sentence} Team B earns an eight.\n\n"
            "**Consistency.** Team A holds firm and gets a seven. Team B gets a six.\n")
    j = parse_judgment(text)
    assert j.team_a_scores.principle_articulation == value and j.team_b_scores.principle_articulation == 8
    assert not [i for i in j.review_items if i.criterion == "principle_articulation"], j.review_reasons


@pytest.mark.parametrize("sentence", [
    "I'd give Team A a 7 if it had named its grounds.", "Team A would have been an 8 had it held firm.",
    "I would have given Team A a 9.", "I'd give Team A a 7 were it not for the second case.",
    "Team A would earn a 9 but for the gap in its rebuttal.", "I'd give Team A a 7, unless the rebuttal counts.",
])
def test_a_counterfactual_is_never_an_unflagged_value(sentence: str) -> None:
    text = f"**Principle articulation.** Team A names its principle. {sentence} Team B earns an 8.\n"
    assert flagged(parse_judgment(text), "a", "principle_articulation"), text
