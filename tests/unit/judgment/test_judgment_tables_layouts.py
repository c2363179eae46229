"""Tables and JSON read by their values (issue #37), tested on generated replies with planted truth.

The generators compose layouts the reader's rules were not written against sentence by sentence: tables with
row numbers, weights, differences, evidence cells (real words from wordfreq, classed by lemminflect, with
counts), a team's count column beside its score column, headers shortened without dots, abbreviations a legend
defines, both teams in one cell under a header that names their order; JSON with a team's scores as a list in
a stated or the rubric's order, distractor keys holding counts and lists of other lengths, corrections by keys
(revised, final, new) and by a list of revisions. Invariants: every cell is the truth or missing and flagged;
a clean reply is read in full and not flagged; a corrected cell is never the old value unflagged.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebtui.core.judgment import parse_judgment
from ebtui.core.judgment.abbreviations import INITIALS, legend_of, short_name
from ebtui.core.judgment.tables import score_talk
from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment
from tests.unit.judgment.test_judgment_accounting import classes, flagged, truth_or_flagged

pytest.importorskip("wordfreq", reason="the word list comes from wordfreq (the test extra)")

FAST = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
THOROUGH = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LABELS = [CRITERION_LABELS[c] for c in CRITERIA]
truths = st.fixed_dictionaries({t: st.lists(st.integers(1, 10), min_size=7, max_size=7) for t in ("a", "b")})
#: values that are no whole score 1-10: a cell holding one is missing and flagged
NOT_SCORES = ["7.5", "11", "0", "70%", "n/a", "—", "6-7", "4/5", "7½"]


def word(draw: st.DrawFn, cls: str | None = None) -> str:
    c = classes()
    return draw(st.sampled_from(c[cls] if cls else c[draw(st.sampled_from(sorted(c)))]))


def check(j: Judgment, truth: dict[str, list[int | None]], text: str, clean: bool) -> None:
    """Every cell the truth or missing and flagged; a clean reply read in full and not flagged."""
    truth_or_flagged(j, truth, text)
    if clean:
        assert not j.needs_review, (text, j.review_reasons)
        assert all(j.parsed_scores(t).as_dict()[c] == truth[t][k]  # type: ignore[arg-type]
                   for t in ("a", "b") for k, c in enumerate(CRITERIA)), text


def withhold(draw: st.DrawFn, truth: dict[str, list[int]]) -> tuple[dict[str, list[str]], dict[str, list[int | None]]]:
    """The cells as written (some, drawn, replaced by a value that is no score) and the truth they leave."""
    hide = draw(st.sets(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 6)), max_size=2))
    cells = {t: [str(v) for v in truth[t]] for t in ("a", "b")}
    want: dict[str, list[int | None]] = {t: list(truth[t]) for t in ("a", "b")}
    for t, i in hide:
        cells[t][i] = draw(st.sampled_from(NOT_SCORES))
        want[t][i] = None
    return cells, want


# -- tables: columns beside the scores ---------------------------------------------------------------------

def evidence(draw: st.DrawFn) -> str:
    """A note of evidence in real words, with counts: "2 principles named, 1 defended", "applied in 3 cases"."""
    n, m = draw(st.integers(0, 12)), draw(st.integers(0, 9))
    noun, verb, adj = word(draw, "noun_pl"), word(draw, "verb_ed"), word(draw, "adj")
    return draw(st.sampled_from([f"{n} {noun} {verb}, {m} {verb}", f"{verb} in {n} {noun}", f"{n} {adj} {noun}",
                                 f"{n} {noun}", f"{adj}: {m}", f"{verb} {n} of {n + m}"]))


def _side_columns(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    cells, want = withhold(draw, truth)
    order = draw(st.permutations(["a", "b"]))
    name = draw(st.sampled_from(["Team {}", "{}", "**Team {}**"]))
    extras = draw(st.lists(st.sampled_from(["rownum", "weight", "delta", "evidence", "count"]), max_size=3,
                           unique=True))
    header = (["#"] if "rownum" in extras else []) + ["Criterion"] + (["Weight"] if "weight" in extras else [])
    count_head = f"{word(draw, 'noun_pl').capitalize()}"
    for t in order:
        header.append(name.format(t.upper()))
        if "evidence" in extras:
            header.append(f"{t.upper()}: {draw(st.sampled_from(['evidence', 'notes', 'comments']))}")
        if "count" in extras:
            header.append(f"{t.upper()} {count_head.lower()} (n)" if draw(st.booleans()) else f"{count_head} {t.upper()}")
    if "delta" in extras:
        header.append(draw(st.sampled_from(["Δ (A−B)", "Diff", "Gap A-B"])))
    rows = []
    talk = False  # a note that speaks of a score or a change ("2 rated", "now 6") keeps its numbers: flagged
    for i in range(7):
        row = ([str(i + 1)] if "rownum" in extras else []) + [LABELS[i]]
        if "weight" in extras:
            row.append(draw(st.sampled_from(["15%", "10%", "0.15", "1.5", "2"])))
        for t in order:
            row.append(cells[t][i])
            if "evidence" in extras:
                row.append(evidence(draw))
                talk = talk or score_talk(row[-1])
            if "count" in extras:
                row.append(str(draw(st.integers(0, 30))))
        if "delta" in extras:
            d = truth["a"][i] - truth["b"][i]
            row.append(f"+{d}" if d > 0 else "0" if d == 0 else f"−{-d}")
        rows.append(row)
    if draw(st.booleans()):  # a total row, its row-number cell blank
        total = ([""] if "rownum" in extras else []) + ["**Total**"] + (["100%"] if "weight" in extras else [])
        for t in order:
            total += [str(sum(truth[t]))] + [""] * (("evidence" in extras) + ("count" in extras))
        rows.append(total + ([""] if "delta" in extras else []))
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    text = "## Scores\n\n" + "\n".join(lines) + f"\n\nTeam A {word(draw, 'verb_ed')} the {word(draw, 'noun')}.\n"
    clean = all(v is not None for t in want.values() for v in t) and not talk
    check(parse_judgment(text), want, text, clean)


@FAST
@given(truths, st.data())
def test_row_numbers_weights_differences_evidence_and_counts_beside_the_scores(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _side_columns(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_columns_beside_the_scores(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _side_columns(data, truth)


def test_two_columns_that_could_both_be_a_teams_score_are_a_conflict() -> None:
    text = ("| Criterion | Team A | Team A | Team B |\n|---|---|---|---|\n"
            + "\n".join(f"| {lab} | 7 | {8 if k == 2 else 7} | 6 |" for k, lab in enumerate(LABELS)) + "\n")
    j = parse_judgment(text)
    assert j.team_a_scores.stakeholder_recognition is None and flagged(j, "a", "stakeholder_recognition")
    assert j.team_a_scores.consistency == 7 and j.team_b_scores.consistency == 6


# -- tables: names shortened, both teams in one cell --------------------------------------------------------

def shortened(draw: st.DrawFn, i: int) -> str:
    """A criterion's header shortened without a dot: the start (5 letters or more) of its label's last word, or
    of its first word where that is unique ("Princ", "Consist", "Stakeh", "Honest", "Engage")."""
    label = LABELS[i].lower().split()
    w = draw(st.sampled_from(label))
    cut = draw(st.integers(min(5, len(w)), len(w)))
    out = w[:cut]
    return out.capitalize() if short_name(out) == CRITERIA[i] else LABELS[i]


def _short_headers(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    cells, want = withhold(draw, truth)
    order = draw(st.permutations(["a", "b"]))
    head = ["Team"] + [shortened(draw, i) for i in range(7)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 8]
    for t in order:
        lines.append(f"| {draw(st.sampled_from(['{}', 'Team {}'])).format(t.upper())} | " + " | ".join(cells[t]) + " |")
    text = "\n".join(lines) + f"\n\nOverall: {word(draw, 'adj')} {word(draw, 'noun')}.\n"
    clean = all(v is not None for t in want.values() for v in t)
    check(parse_judgment(text), want, text, clean)


@FAST
@given(truths, st.data())
def test_headers_shortened_without_dots(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _short_headers(data, truth)


def _pair_cells(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    order = draw(st.permutations(["a", "b"]))
    sep_head = draw(st.sampled_from([" vs ", "/", " / ", " : "]))
    sep = draw(st.sampled_from([" vs ", "/", " / ", " : ", " v. "]))
    head = draw(st.sampled_from(["{} {}", "Team {} {} Team {}"]))
    header = (f"{order[0].upper()}{sep_head}{order[1].upper()}" if head == "{} {}"
              else f"Team {order[0].upper()}{sep_head}Team {order[1].upper()}")
    want: dict[str, list[int | None]] = {t: list(truth[t]) for t in ("a", "b")}
    rows = []
    for i in range(7):
        x, y = truth[order[0]][i], truth[order[1]][i]
        if sep.strip() == "/" and y == 10:
            want[order[0]][i] = want[order[1]][i] = None  # "7/10": seven out of ten, or 7 and 10? Left missing
        rows.append(f"| {LABELS[i]} | {x}{sep}{y} |")
    text = f"| Criterion | {header} |\n|---|---|\n" + "\n".join(rows) + f"\n\n{word(draw, 'adj').capitalize()}.\n"
    clean = all(v is not None for t in want.values() for v in t)
    check(parse_judgment(text), want, text, clean)


@FAST
@given(truths, st.data())
def test_both_teams_in_one_cell_under_a_header_that_names_their_order(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _pair_cells(data, truth)


def test_a_difference_header_is_no_pair_of_teams() -> None:
    text = ("| Criterion | A−B |\n|---|---|\n" + "\n".join(f"| {lab} | 8/6 |" for lab in LABELS) + "\n")
    j = parse_judgment(text)
    assert all(v is None for v in j.team_a_scores.as_dict().values()) and j.needs_review


def _legend(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    abbr = {}
    for i, c in enumerate(CRITERIA):
        label = LABELS[i].upper().replace(" ", "")
        picks = draw(st.lists(st.integers(1, len(label) - 1), min_size=1, max_size=3, unique=True))
        abbr[c] = label[0] + "".join(label[k] for k in sorted(picks))
    # a legend must define each abbreviation once, for one criterion; equal or canonical abbreviations are left
    # to the initials the reader knows
    if len(set(abbr.values())) < 7 or any(a in INITIALS for a in abbr.values()):
        abbr = {c: i for i, c in INITIALS.items()}
    legend = ", ".join(f"{abbr[c]} = {LABELS[k].lower()}" for k, c in enumerate(CRITERIA))
    assert legend_of(legend) in ({}, {a: c for c, a in abbr.items()})
    lines = [f"Legend: {legend}.", ""]
    for t in draw(st.permutations(["a", "b"])):
        lines.append(f"Team {t.upper()}: " + ", ".join(f"{abbr[c]} {truth[t][k]}" for k, c in enumerate(CRITERIA)))
    text = "\n".join(lines) + f"\n\nOverall: {word(draw, 'adj')}.\n"
    # read in full where the legend defines each abbreviation at least as long as the criterion's initials
    full = bool(legend_of(legend)) and all(len(abbr[c]) >= len(i) for i, c in INITIALS.items())
    check(parse_judgment(text), truth, text, full)


@FAST
@given(truths, st.data())
def test_abbreviations_a_legend_defines(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _legend(data, truth)


def test_a_legend_abbreviation_is_read_as_its_criterion() -> None:
    text = ("Legend: PA = principle articulation, CON = consistency, SR = stakeholder recognition, UI = uncertainty "
            "integration, FA = framework awareness, IH = intellectual honesty, CE = constructive engagement.\n\n"
            "Team A: PA 7, CON 8, SR 7, UI 6, FA 8, IH 7, CE 7\nTeam B: PA 6, CON 5, SR 8, UI 7, FA 6, IH 8, CE 7\n")
    j = parse_judgment(text)
    assert (j.team_a_scores.consistency, j.team_b_scores.consistency) == (8, 5) and not j.needs_review


# -- JSON --------------------------------------------------------------------------------------------------

def distractor_keys(draw: st.DrawFn) -> dict[str, object]:
    """Keys that hold numbers that are no scores: counts under real nouns, lists of other lengths."""
    out: dict[str, object] = {}
    for _ in range(draw(st.integers(0, 3))):
        noun = word(draw, "noun_pl")
        out[draw(st.sampled_from([f"num_{noun}", f"{noun}_count", f"{noun}_named"]))] = draw(st.integers(0, 40))
    if draw(st.booleans()):
        n = draw(st.sampled_from([3, 5, 6, 8]))
        key = draw(st.sampled_from(["scores_by_round", "ranks", word(draw, "noun_pl")]))
        if key != "scores":  # (the team's own key for its list: a distractor must not replace it)
            out[key] = draw(st.lists(st.integers(1, 10), min_size=n, max_size=n))
    return out


def _json_arrays(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    order = list(CRITERIA)
    stated = draw(st.booleans())
    if stated:
        order = draw(st.permutations(list(CRITERIA)))
    want: dict[str, list[int | None]] = {t: list(truth[t]) for t in ("a", "b")}
    doc: dict[str, object] = {}
    if stated:
        doc["criteria"] = [draw(st.sampled_from([c, CRITERION_LABELS[c]])) for c in order]
    shape = draw(st.sampled_from(["direct", "scores", "list"]))
    teams = []
    for t in ("a", "b"):
        values: list[object] = [truth[t][CRITERIA.index(c)] for c in order]
        bad = draw(st.sampled_from(["none", "none", "short", "long", "outside"]))
        if bad == "short":
            values = values[:6]
        elif bad == "long":
            values = [*values, draw(st.integers(1, 10))]
        elif bad == "outside":
            values[draw(st.integers(0, 6))] = draw(st.sampled_from([0, 11, 7.5, 12]))
        if bad != "none":
            want[t] = [None] * 7
        extra = distractor_keys(draw)
        if shape == "direct":
            doc[f"team_{t}"] = values
            doc.update({f"team_{t}_{k}": v for k, v in extra.items()})
        elif shape == "scores":
            doc[f"team_{t}"] = {"scores": values, **extra, "justification": f"{word(draw, 'adj')} {word(draw, 'noun')}"}
        else:
            teams.append({"team": f"Team {t.upper()}", "scores": values, **extra})
    if teams:
        doc["teams"] = teams
    text = json.dumps(doc, indent=draw(st.sampled_from([None, 2])))
    clean = all(v is not None for t in want.values() for v in t)
    check(parse_judgment(text), want, text, clean)


@FAST
@given(truths, st.data())
def test_json_scores_as_lists_in_the_criteria_order(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _json_arrays(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_json_scores_as_lists(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _json_arrays(data, truth)


def test_two_stated_orders_leave_a_list_unread() -> None:
    doc = {"criteria": list(CRITERIA), "also": list(reversed(CRITERIA)), "team_a": [8, 7, 6, 5, 4, 3, 2],
           "team_b": [2, 3, 4, 5, 6, 7, 8]}
    j = parse_judgment(json.dumps(doc))
    assert all(v is None for v in j.team_a_scores.as_dict().values()) and j.needs_review


LATE_KEYS = ["revised_score", "final_score", "new_score", "updated_score", "corrected_rating", "adjusted_score",
             "revised", "final", "score_revised", "finalScore"]


def _json_corrections(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    t = draw(st.sampled_from(["a", "b"]))
    i = draw(st.integers(0, 6))
    old = truth[t][i]
    new = draw(st.integers(1, 10).filter(lambda x: x != old))
    note = f"{word(draw, 'verb_ed')} after {word(draw, 'noun')}"
    doc: dict[str, object] = {}
    for tt in ("a", "b"):
        doc[f"team_{tt}"] = {c: {"score": truth[tt][k], "note": f"{word(draw, 'adj')} {word(draw, 'noun')}"}
                             for k, c in enumerate(CRITERIA)}
    how = draw(st.sampled_from(["late_key", "plain_keys", "prior_key", "revisions", "revisions_no_team",
                                "revisions_from_to"]))
    cell: dict[str, object] = doc[f"team_{t}"][CRITERIA[i]]  # type: ignore[index]
    settled: int | None = new
    if how == "late_key":  # (since issue #37's sixth round no key word settles a second value: a conflict)
        cell[draw(st.sampled_from(LATE_KEYS))] = new
        cell["note"] = note
        settled = None
    elif how == "plain_keys":
        cell[draw(st.sampled_from(["rating", "points", "grade", "mark"]))] = new
        settled = None  # two readings, neither later: a conflict
    elif how == "prior_key":
        doc[f"team_{t}"][CRITERIA[i]] = {  # type: ignore[index]
            draw(st.sampled_from(["original_score", "initial_score", "previous_score", "draft_score"])): old,
            "score": new, "note": note}
        settled = new  # ("score" beside a draft's key: read as the final, flagged, or a conflict: either is safe)
    else:
        entry: dict[str, object] = {"criterion": draw(st.sampled_from([CRITERIA[i], LABELS[i]]))}
        if how != "revisions_no_team":
            entry["team"] = draw(st.sampled_from([f"team_{t}", f"Team {t.upper()}", t.upper()]))
        if how == "revisions_from_to":
            entry.update({"from": old, "to": new})
        else:
            entry[draw(st.sampled_from(["new_score", "revised_score", "score"]))] = new
        entry["reason"] = note
        doc[draw(st.sampled_from(["revisions", "corrections", "score_changes", "amendments"]))] = [entry]
        settled = None
    text = json.dumps(doc, indent=2)
    j = parse_judgment(text)
    got = j.parsed_scores(t).as_dict()[CRITERIA[i]]  # type: ignore[arg-type]
    assert got in (settled, None), (how, got, old, new, text, j.review_reasons)
    assert flagged(j, t, CRITERIA[i]), (how, text, j.review_reasons)
    want: dict[str, list[int | None]] = {tt: list(truth[tt]) for tt in ("a", "b")}
    want[t][i] = settled
    if how == "revisions_no_team":
        want[{"a": "b", "b": "a"}[t]][i] = None
    check(j, want, text, False)


@FAST
@given(truths, st.data())
def test_json_corrections_by_structure_never_keep_the_old_value_unflagged(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _json_corrections(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_json_corrections(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _json_corrections(data, truth)


def test_a_revision_in_json_leaves_its_cell_missing_with_both_values() -> None:
    """A second value for a cell, whatever its key says ("new_score" in a list naming the team and criterion):
    two values and no structure to settle them are a conflict, missing, with both values in the item."""
    doc = {"team_a": {c: {"score": 7} for c in CRITERIA}, "team_b": {c: {"score": 6} for c in CRITERIA},
           "revisions": [{"team": "team_b", "criterion": "consistency", "new_score": 4, "reason": "on re-reading"}]}
    j = parse_judgment(json.dumps(doc, indent=2))
    assert j.team_b_scores.consistency is None and j.team_a_scores.consistency == 7
    assert [(i.team, i.criterion, i.kind) for i in j.review_items] == [("b", "consistency", "conflict")]
    assert "6" in j.review_items[0].message and "4" in j.review_items[0].message
