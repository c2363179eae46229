"""The cold build of the analysis columns, made faster: every fast path gives exactly what the reading it
replaces gives — the style counts what style.text_style counts, and the facts of a whole store of hostile
texts equal the facts the plain lexicon reading gives (ebtui.core.analysis.frame, source_read)."""

from __future__ import annotations

import random

import pytest

from ebtui.core.analysis.frame import style_counts
from ebtui.core.analysis.style import team_text, text_style

#: characters that make the style rules' edge cases: Markdown marks, line breaks of every kind, spaces that
#: are not " " (and some that look like spaces but are not: zero width), word characters that are not ASCII
PIECES = ["*", "**", "_", "__", "`", "#", "## ", "- ", "+ ", "1. ", "12) ", "1234. ", "| ", "> ", "\n", "\n\n", "\r\n",
          "\r", " ", "\t", "\u00a0", "\u2003", "\u2028", "\u0085", "\x1c", "\x1f", "\u200b", "\u3000", "é", "x", "word",
          "_x_", "*y*", "**bold**", "`code`", "a_b_c", "2*3*4", "—", "\u212a"]


def _hostile(rnd: random.Random) -> str:
    return "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 40)))


def test_style_counts_equal_text_style_on_hostile_texts() -> None:
    rnd = random.Random(11)
    for _ in range(5000):
        text = _hostile(rnd)
        want = text_style(text)
        assert style_counts(text) == (want.words, want.format_elements), repr(text)


def test_style_counts_use_style_py_s_patterns() -> None:
    from ebtui.core.analysis import style, text_facts

    assert text_facts._SPAN.pattern == style._SPAN.pattern
    assert style._BLOCK.pattern == "^" + text_facts._BLOCK_AT_START.pattern
    assert text_facts._BLOCK_AFTER_BREAK.pattern == "\\n" + text_facts._BLOCK_AT_START.pattern


def test_style_counts_on_texts_whose_answer_is_known() -> None:
    assert style_counts("") == (0, 0)
    assert style_counts("# Title\n- one *two*\n  3. three `x`") == (8, 5)  # heading, bullet, item; two spans
    assert style_counts("no marks at all, 2*3 = 6") == (7, 0)  # a lone * is no span
    assert style_counts("line one\n\n> quoted __strong__") == (5, 2)
    assert style_counts("#notaheading 1.5 and 12345. x") == (5, 0)  # no space after #; five digits


def _lexicon_fw(text: str) -> tuple[int, dict[str, str]]:
    """The framework facts as the plain lexicon reading gives them (every sentence, every pattern)."""
    from ebtui.core.frameworks import framework_mentions

    found = framework_mentions(text)
    return sum(1 << k for k, hits in enumerate(found.values()) if hits), \
        {fw: hits[0].sentence for fw, hits in found.items() if hits}


def _lexicon_class(text: str) -> object:
    from ebtui.core.analysis.consistency_rules import ConsistencyClassification
    from ebtui.core.frameworks import consistency_cues

    cues = consistency_cues(text)
    label = next((k for k in ("acknowledged_refinement", "relevant_difference", "inconsistent_unacknowledged",
                              "kept_principle") if cues[k]), "unclassified")
    hits = cues.get(label, [])
    return ConsistencyClassification(label, [h.sentence for h in hits], [h.cue for h in hits])


def _hostile_rounds(n: int, seed: int) -> list[object]:
    """Rounds as the benchmark generates them, their answers and remarks salted with Markdown, odd spaces and
    line breaks, cased at random, some answers empty or failed, some judgments added later."""
    from datetime import UTC, datetime

    from benchmarks.gen_store import MODEL_NAMES, make_round, rejudgment
    from ebtui.core.records import PhaseStatus

    rnd = random.Random(seed)
    names = list(MODEL_NAMES[:6])
    skill = {m: 6.0 for m in names}
    sev = {m: 0.0 for m in names}
    out = []
    for k in range(n):
        a, b, judge, other = rnd.sample(names, 4)
        r = make_round(k, rnd, dilemma=f"d{k % 3}", a=a, b=b, judge=judge, skill=skill, severity=sev,
                       difficulty=0.0, t0=datetime(2026, 1, 1, tzinfo=UTC), tournament="t")
        for ph in r.phases:
            words = ph.response.split(" ")
            ph.response = rnd.choice(PIECES) + "".join(w.upper() if rnd.random() < 0.1 else w + rnd.choice(PIECES) for w in words)
            if rnd.random() < 0.05:
                ph.response = ""
            elif rnd.random() < 0.05:
                ph.status = PhaseStatus.FAILED
        assert r.judgment is not None
        r.judgment.team_a_justification += rnd.choice(PIECES) + "Kantian DUTIES?\u00a0Utilitarian!\n\n**care** ethics"
        if rnd.random() < 0.3:
            r.extra_judgments.append(rejudgment(r, rnd, judge=other, skill=skill, severity=sev, difficulty=0.0))
        if rnd.random() < 0.1:
            r.judgment = None
        out.append(r)
    return out


def test_the_facts_of_hostile_rounds_equal_the_plain_lexicon_reading(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ebtui.core.analysis import consistency_rules, frame, source_read

    rounds = _hostile_rounds(120, seed=5)
    fast = [frame.judgment_facts(r) for r in rounds]
    fast_rows = source_read.arrow_table([source_read.record_row(x, (1, 2)) for recs in fast for x in recs])
    monkeypatch.setattr(frame, "_fw", _lexicon_fw)
    monkeypatch.setattr(frame, "_team_style", lambda r, team, parts: (text_style(team_text(r, team)).words,
                                                                    text_style(team_text(r, team)).format_elements))
    monkeypatch.setattr(consistency_rules, "classify_consistency", _lexicon_class)
    plain = [frame.judgment_facts(r) for r in rounds]
    assert fast == plain
    assert sum(len(x) for x in fast) > 120 and any(x["quotes"] for recs in fast for x in recs)
    assert any(x["style"][1] > 0 for recs in fast for x in recs)  # some formatting was counted
    assert fast_rows.equals(source_read.arrow_table([source_read.record_row(x, (1, 2)) for recs in plain for x in recs]))


def test_without_the_automaton_the_facts_are_the_same(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ebtui.core.analysis import frame, text_facts

    rounds = _hostile_rounds(40, seed=8)
    fast = [frame.judgment_facts(r) for r in rounds]
    assert text_facts._starts() is not None and all(text_facts._starts().covered)  # type: ignore[union-attr]
    assert text_facts._fast() is not None  # (the one-scan reading is the one used)
    monkeypatch.setattr(text_facts, "_FAST", [None])  # (the general reading: `_fw_any`)
    assert [frame.judgment_facts(r) for r in rounds] == fast
    monkeypatch.setattr(text_facts, "_STARTS", [None])  # (as when ahocorasick_rs cannot be imported)
    assert [frame.judgment_facts(r) for r in rounds] == fast


def test_literal_prefixes_of_patterns_whose_answer_is_known() -> None:
    from ebtui.core.analysis.frame import literal_prefix

    assert literal_prefix(r"\bkant\w*") == "kant"
    assert literal_prefix(r"\brights?\b") == "right"  # the quantifier takes the s
    assert literal_prefix(r"\bgreatest (?:good|number)\b") == "greatest "
    assert literal_prefix(r"\b(?:morally )?relevant") == ""  # opens with a group
    assert literal_prefix(r"\bduty|obligation") == ""  # two alternatives at the top
    assert literal_prefix(r"\bcare[- ](?:based|ethics?)\b") == "care"
    assert literal_prefix(r"\bnet (?:harm|benefit)|[|]x") == ""
    assert literal_prefix(r"\bab{2}") == "a"


def test_stand_in_rounds_are_what_model_copy_gives(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ebtui.core.analysis import bias_source
    from ebtui.core.analysis.frame import Facts
    from ebtui.core.records import Override

    rounds = _hostile_rounds(60, seed=9)
    for r in rounds[::7]:  # overrides in force, which the stand-ins keep
        for j in [r.judgment, *r.extra_judgments][:1]:
            if j is not None:
                j.overrides.append(Override(team="a", criterion="consistency", parsed_value=3, value=9, note="n"))
    facts = Facts.from_rounds(rounds)
    fast = bias_source.stand_in_rounds(facts)
    monkeypatch.setattr(bias_source, "_copy", lambda model, update: model.model_copy(update=update))
    slow = bias_source.stand_in_rounds(facts)

    def dump(r: object) -> object:  # (the templates, made twice, differ in their time of making only)
        def strip(x: object) -> object:
            if isinstance(x, dict):
                return {k: strip(v) for k, v in x.items() if k not in ("time", "timestamp")}
            return [strip(v) for v in x] if isinstance(x, list) else x

        return strip(r.model_dump())  # type: ignore[attr-defined]

    assert [dump(r) for r in fast] == [dump(r) for r in slow] and len(fast) == 60
    for a, b in zip(fast, slow, strict=True):
        assert a.model_fields_set == b.model_fields_set
        for ja, jb in zip([a.judgment, *a.extra_judgments], [b.judgment, *b.extra_judgments], strict=True):
            assert (ja and ja.model_fields_set) == (jb and jb.model_fields_set)
            assert (ja and ja.team_a_scores.model_fields_set) == (jb and jb.team_a_scores.model_fields_set)
        assert [p.model_fields_set for p in a.phases] == [p.model_fields_set for p in b.phases]
    assert fast[0].phases[0] is not fast[1].phases[0]  # (no object shared between stand-ins)
    assert fast[0].__pydantic_extra__ is not fast[1].__pydantic_extra__
    assert sum(bool(j.overrides) for r in fast for j in [r.judgment, *r.extra_judgments] if j) >= 5


# ---- round files decoded by msgspec (round_decode.py): the same Round pydantic reads, or pydantic reads it ----

def _facts_or_error(read, data: bytes) -> object:  # type: ignore[no-untyped-def]
    from ebtui.core.analysis.frame import judgment_facts

    try:
        r = read(data)
    except ValueError:
        return "refused"
    return judgment_facts(r)


def _paths(node: object, at: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    out = [at]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*at, i))
    return out


#: values a damaged or foreign file may hold where another type belongs: other JSON types, scores out of range
#: or as text, dates in other forms, unknown names, text with lone surrogates
ODD_VALUES: list[object] = [
    None, 0, 11, -1, 7, 7.0, 7.5, "7", True, False, "", [], {}, [1, 2], {"x": 1}, "a", "b", "ba", "score", "accept",
    "complete", "running", "presentation", "consistency", "not_a_criterion", "2026-01-01", "2026-01-01 00:00:00",
    "2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00.123Z", "2026-01-01T00:00:00.123456789Z", "2026-01-01T00:00:00+05:30",
    "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00", "1767225600",
    "2026-01-01t00:00:00z", "2026-01-01T00:00:00.1234567Z", "2026-01-01T00:00Z", "2026-01-01T00:00:00,5Z",
    "2026-01-01T00:00:00+0530", "2026-01-01T00:00:00+24:00", "0000-01-01T00:00:00Z", "2026-01-01T00:00:00.9999995Z",
    "\ud800 lone", "x\u0000y", 1767225600, 1e300, -0.0, "Kantian duty.\u2028Utilitarian!",
]


def _mutated(rnd: random.Random, source: str) -> bytes:
    import json

    doc = json.loads(source)
    for _ in range(rnd.randint(1, 3)):
        path = rnd.choice(_paths(doc)[1:])
        parent = doc
        for k in path[:-1]:
            parent = parent[k]  # type: ignore[index]
        how = rnd.random()
        if how < 0.2 and isinstance(parent, dict) and path not in (("id",), ("timestamp",)):
            del parent[path[-1]]  # a field missing (not those pydantic makes afresh: a new id, the time now)
        elif how < 0.3 and isinstance(parent, dict):
            parent["unknown_" + str(path[-1])] = rnd.choice(ODD_VALUES)  # a field of another version
        elif how < 0.4 and isinstance(parent, dict) and path[-1] == "judgment" and parent[path[-1]]:
            j = parent[path[-1]]  # a checklist without (or with) its plain copies: the model validator's rule
            j["review_items"] = [{"kind": "missing", "message": "m1"}, {"kind": "x", "message": "m1"}]
            for k in rnd.sample(["needs_review", "review_reasons"], rnd.randint(0, 2)):
                j.pop(k, None)
        elif how < 0.5 and path[-1] in ("judgment",) and isinstance(parent, dict) and parent[path[-1]]:
            parent[path[-1]]["overrides"] = [{"team": rnd.choice("ab"), "criterion": rnd.choice(
                ["consistency", "framework_awareness", "nope"]), "parsed_value": rnd.choice([None, 3]),
                "value": rnd.choice([None, 1, 10, 11]), "kind": rnd.choice(["score", "accept", "other"]),
                "time": rnd.choice(["2026-01-01T00:00:00Z", "yesterday"])}]
        else:
            parent[path[-1]] = rnd.choice(ODD_VALUES)  # type: ignore[index]
    text = json.dumps(doc, ensure_ascii=rnd.random() < 0.5)
    if rnd.random() < 0.05:  # a key given twice (the last one counts, for both readers)
        text = text.replace('"status": ', '"status": "failed", "status": ', 1)
    data = text.encode("utf-8", "surrogatepass")
    if rnd.random() < 0.03:
        data = data.replace(b"e", b"\xff", 1)  # not UTF-8
    return data


def test_decoded_round_files_give_the_facts_pydantic_gives_also_when_damaged() -> None:
    _damaged_files_read_as_pydantic_reads_them(mutations=300)


@pytest.mark.slow
def test_many_damaged_round_files_read_as_pydantic_reads_them() -> None:
    _damaged_files_read_as_pydantic_reads_them(mutations=4000, seed=5)


def _damaged_files_read_as_pydantic_reads_them(mutations: int, seed: int = 4) -> None:
    import json

    from ebtui.core.analysis import round_decode
    from ebtui.core.records import Round
    from ebtui.core.store.files import round_bytes

    assert round_decode._decoder() is not None  # every record model is mirrored (a new validator: see MIRRORED)
    rounds = _hostile_rounds(30, seed=21)
    docs = [json.loads(round_bytes(r)) for r in rounds]  # type: ignore[arg-type]
    for r in rounds:  # undamaged: read fast, the same facts
        data = round_bytes(r)  # type: ignore[arg-type]
        assert type(round_decode.read_round(data)).__name__ == "FastRound"
        assert _facts_or_error(round_decode.read_round, data) == _facts_or_error(Round.model_validate_json, data)
    rnd = random.Random(seed)
    fast = refused = 0
    sources = [json.dumps(d) for d in docs]
    for _ in range(mutations):
        data = _mutated(rnd, rnd.choice(sources))
        want = _facts_or_error(Round.model_validate_json, data)
        assert _facts_or_error(round_decode.read_round, data) == want, data[:300]
        try:
            fast += type(round_decode._decoder().decode(data)).__name__ == "FastRound"
        except Exception:  # noqa: BLE001 (msgspec's errors: pydantic read it)
            refused += want == "refused"
    assert fast > mutations // 5 and refused > mutations // 15  # both paths were exercised
    # every date of a round in every odd form: read as pydantic reads it (or refused by both)
    doc = next(d for d in docs if d["judgment"] and d["extra_judgments"])
    doc["judgment"]["overrides"] = [{"team": "a", "criterion": "consistency", "parsed_value": 3, "value": 9,
                                     "time": "2026-01-01T00:00:00Z"}]
    dated = [p for p in _paths(doc) if p and p[-1] in ("timestamp", "finished_at", "judged_at", "time")]
    forms = [v for v in ODD_VALUES if isinstance(v, str) and v[:2] in ("20", "00", "17")] + [None, 0]
    assert len(dated) >= 8 and len(forms) >= 15
    for path in dated:
        for form in forms:
            changed = json.loads(json.dumps(doc))
            node = changed
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = form
            data = json.dumps(changed).encode()
            assert _facts_or_error(round_decode.read_round, data) == _facts_or_error(Round.model_validate_json, data), \
                (path, form)


def test_the_plain_date_form_is_read_as_pydantic_reads_it() -> None:
    from pydantic import TypeAdapter

    from ebtui.core.analysis.round_decode import _when

    pyd = TypeAdapter(__import__("datetime").datetime)
    for text in ("2026-01-01T00:00:00Z", "2026-03-04T05:06:07.123+05:30", "2026-12-31T23:59:59.999999-11:00",
                 "2024-02-29T12:00:00", "2026-06-01T00:00:00.000Z"):
        got, want = _when(text), pyd.validate_python(text)
        assert (str(got), got.timestamp()) == (str(want), want.timestamp())
    for text in ("2026-01-01", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00.5Z", "2026-01-01T00:00Z", "x"):
        try:
            _when(text)
        except ValueError:
            continue
        raise AssertionError(text)


def test_scores_and_review_state_are_what_the_records_and_review_rules_give() -> None:
    from ebtui.core.analysis.frame import _scores
    from ebtui.core.records import CRITERIA, Judgment, Override, ReviewReason, Scores
    from ebtui.core.review import needs_review

    rnd = random.Random(3)
    seen = set()
    for _ in range(600):
        vals = [{c: rnd.choice([None, 1, 5, 10]) if rnd.random() < 0.2 else rnd.randint(1, 10) for c in CRITERIA}
                for _team in "ab"]
        j = Judgment(team_a_scores=Scores(**vals[0]), team_b_scores=Scores(**vals[1]))
        if rnd.random() < 0.3:
            j.needs_review = True
            j.review_reasons = rnd.choice([[], ["Team A consistency: unclear"], ["scores read from lines of text"]])
        if rnd.random() < 0.3:
            j.review_items = [ReviewReason(team=rnd.choice(["a", "b", None]), criterion=rnd.choice([None, *CRITERIA]),
                                           kind=rnd.choice(["missing", "prose"]), message="m")]
        for _k in range(rnd.choice([0, 0, 1, 3])):
            j.overrides.append(Override(team=rnd.choice("ab"), criterion=rnd.choice(CRITERIA), parsed_value=None,
                                        value=rnd.choice([None, 2, 9]), kind=rnd.choice(["score", "accept"])))
        review, parsed, effective = _scores(j)
        assert review == needs_review(j)
        assert parsed == [[v or 0 for v in j.parsed_scores(t).as_dict().values()] for t in "ab"]
        assert effective == [[v or 0 for v in j.effective_scores(t).as_dict().values()] for t in "ab"]
        seen.add((review, bool(j.overrides), j.needs_review))
    assert len(seen) >= 6  # flagged and not, with and without overrides, reached by either path
    assert _scores(None) == (False, None, None)


CUE_PIECES = ["the same principle applies", "a relevant difference", "I was wrong", "we refine it", "here, however, I would "
              "not", "the opposite conclusion", "it remains consistent", "REFINEMENT", "disanalogous", " ", ". ", "! ",
              "? ", "\n", "\n\n", ".\n ", "  ", "\u2028", "\u00a0", "word", "é", "principle", "same", "differ", "\u212aey "
              "difference", "_refine", "x."]


def test_consistency_cues_from_whole_text_matches_equal_the_sentence_by_sentence_reading(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import re

    from ebtui.core import frameworks

    def plain(text: str, label: str) -> list[object]:
        return [frameworks.CueMatch(label, cue, s) for s in frameworks.sentences(text)
                if (cue := frameworks._first_match(frameworks._CONSISTENCY_RE[label], s))]

    rnd = random.Random(17)
    texts = ["".join(rnd.choice(CUE_PIECES) for _ in range(rnd.randint(0, 30))) for _ in range(1500)]
    hits = 0
    for text in texts:
        for label in frameworks.CONSISTENCY_CUES:
            got = frameworks.consistency_cues_of(text, label)
            assert got == plain(text, label), (label, text)
            hits += len(got)
    assert hits > 1000
    # cues that can start or end in a sentence's spaces, or run across a separator: read sentence by sentence
    odd = (r" principle", r"principle\s+applies", r"wrong\.", r"\bsame ")
    monkeypatch.setitem(frameworks.CONSISTENCY_CUES, "kept_principle", odd)
    monkeypatch.setitem(frameworks._CONSISTENCY_RE, "kept_principle", tuple(re.compile(p, re.I) for p in odd))
    monkeypatch.setattr(frameworks, "_CONSISTENCY_ANY", {})
    for text in texts:
        assert frameworks.consistency_cues_of(text, "kept_principle") == plain(text, "kept_principle"), text


def test_needles_of_patterns_whose_answer_is_known() -> None:
    from ebtui.core.frameworks import AnyOf, needle

    assert needle(r"\brefine\w*") == ("refine", 0)
    assert needle(r"\b(?:morally )?relevant differences?\b") == ("relevant difference", 8)  # the s is optional
    assert needle(r"\b(?:here|there) now") == (" now", 5)
    assert needle(r"\bqualif(?:y|ied)\w* (?:my|the) principle\b") == ("qualif", 0)  # bounded before longest
    assert needle(r"\b\w+ principle") == (" principle", None)  # no bound on what comes before
    assert needle(r"\b(?:a|b)") == ("", None)  # nothing every match holds
    assert needle(r"\bKant") == ("ant", 1)  # (upper case is not plain: a folded text holds it lower-cased)
    assert AnyOf((r"\brefine\w*", r"\b(?:a|b)x")).needles == (("refine", 0), ("x", 1))
    assert AnyOf((r"\brefine\w*", r"\b(?:a|b)")).needles is None  # one pattern without: no prefilter
    any_ = AnyOf((r"\b\w+ principle", r"\b(?:the |a )?same conclusion"))
    text = "The same conclusion, a principle; xx principle."
    def span(m: object) -> object:
        return None if m is None else m.span()  # type: ignore[attr-defined]

    got = [span(any_.search(text, pos=p)) for p in range(len(text))]
    assert got == [span(any_.exact.search(text, p)) for p in range(len(text))] and got[0] == (0, 19)
    assert AnyOf((r"\brefine\w*", r"\bsame principle")).search("The Same  principle; the same principle!") is not None


# ---- a first build streams its rows to the file (source_write.StreamedFile) ----------------------------------

def _store_of_hostile_rounds(root: object, n: int = 25) -> object:
    from tests.support.factories import open_store

    s = open_store(root)  # type: ignore[arg-type]
    for r in _hostile_rounds(n, seed=13):
        s.save_round(r)  # type: ignore[arg-type]
    s.flush()
    return s


def test_a_streamed_first_build_writes_what_the_whole_table_write_gives(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import numpy as np
    import pyarrow.parquet as pq

    from ebtui.core.analysis import source, source_write
    from ebtui.core.store import ResultsStore

    store = _store_of_hostile_rounds(tmp_path / "s")
    monkeypatch.setattr(source_write, "ROW_GROUP", 7)  # several row groups, the last one short
    streamed = source.FactsSource(ResultsStore(store.root))  # type: ignore[attr-defined]
    a = streamed.facts()
    assert streamed._quotes is None and streamed.last_sync["rebuilt"]  # the quotes stayed in the file
    table_a = pq.read_table(streamed.path)
    groups = pq.ParquetFile(streamed.path).metadata
    assert [groups.row_group(g).num_rows for g in range(groups.num_row_groups)][:-1] == [7] * (groups.num_row_groups - 1)
    streamed.path.unlink()
    monkeypatch.setattr(source_write.StreamedFile, "open", classmethod(lambda cls, path: None))  # the whole-table write
    whole = source.FactsSource(ResultsStore(store.root))  # type: ignore[attr-defined]
    b = whole.facts()
    assert table_a.equals(pq.read_table(whole.path), check_metadata=True) and table_a.num_rows > 25
    rows = np.arange(len(a))
    assert a.quotes_of(rows) == b.quotes_of(rows) and any(a.quotes_of(rows))
    assert not [p for p in streamed.path.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_streamed_build_that_cannot_finish_its_file_reads_again_and_keeps_the_quotes(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    from ebtui.core.analysis import source, source_write
    from ebtui.core.store import ResultsStore

    store = _store_of_hostile_rounds(tmp_path / "s", n=20)
    want = source.FactsSource(ResultsStore(store.root)).facts()  # type: ignore[attr-defined]
    rows = np.arange(len(want))
    want_quotes = want.quotes_of(rows)
    src = source.FactsSource(ResultsStore(store.root))  # type: ignore[attr-defined]
    src.path.unlink()
    monkeypatch.setattr(source_write, "ROW_GROUP", 5)
    real = source_write.StreamedFile._write

    def disk_full(self, whole_groups: bool) -> None:  # type: ignore[no-untyped-def]
        real(self, whole_groups)
        self.failed = True  # (as when a write raises OSError)

    monkeypatch.setattr(source_write.StreamedFile, "_write", disk_full)
    monkeypatch.setattr(source.FactsSource, "_write_file", lambda self, whole: False)  # the disk stays full
    got = src.facts()
    assert got.id.tolist() == want.id.tolist() and got.quotes_of(rows) == want_quotes and any(want_quotes)
    assert src._quotes is not None and not src.path.exists()  # in memory only; no part-written file left
    assert not [p for p in src.path.parent.iterdir() if p.name.endswith(".tmp")]


# ---- the progress line --------------------------------------------------------------------------------------

class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_progress_line_on_a_terminal_is_one_line_rewritten_and_ended() -> None:
    from ebtui.core.analysis.source import ProgressLine

    out: list[str] = []
    clock = _Clock()
    line = ProgressLine(out.append, terminal=True, after=0.5, per_second=10, clock=clock)
    line(0, 10_000)  # (too early: a quick build shows nothing)
    for done in range(500, 10_001, 500):
        clock.now += 0.06
        line(done, 10_000)
    assert out[0] == "\r\x1b[Kbuilding the analysis columns: 4,500 / 10,000 rounds"  # from 0.5 s on
    assert out[-1] == "\r\x1b[Kbuilding the analysis columns: 10,000 / 10,000 rounds\n"
    assert len(out) <= 7 and all(not x.endswith("\n") for x in out[:-1])  # at most 10 a second
    line(10_000, 10_000)
    assert out[-1].endswith("\n") and sum(x.endswith("\n") for x in out) == 1


def test_the_progress_line_elsewhere_is_a_few_lines() -> None:
    from ebtui.core.analysis.source import ProgressLine

    out: list[str] = []
    clock = _Clock()
    line = ProgressLine(out.append, terminal=False, after=0.5, clock=clock)
    for done in range(0, 100_001, 500):
        clock.now += 0.05
        line(done, 100_000)
    assert out == [f"building the analysis columns: {n} / 100,000 rounds\n" for n in ("25,000", "50,000", "75,000",
                                                                                       "100,000")]
    quick: list[str] = []
    fast = ProgressLine(quick.append, terminal=False, after=0.5, clock=_Clock())
    for done in (0, 5_000, 10_000):
        fast(done, 10_000)
    assert quick == []


def test_a_cold_build_reports_its_progress_to_the_end(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ebtui.core.analysis import source, source_read
    from ebtui.core.store import ResultsStore

    store = _store_of_hostile_rounds(tmp_path / "s", n=30)
    seen: list[tuple[int, int]] = []
    chunk = source_read.CHUNK
    try:
        source_read.CHUNK = 7
        source.FactsSource(ResultsStore(store.root)).facts(lambda d, t: seen.append((d, t)))  # type: ignore[attr-defined]
    finally:
        source_read.CHUNK = chunk
    assert seen[0] == (0, 30) and seen[-1] == (30, 30) and len(seen) == 6  # 0, then after each of 5 chunks
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    again: list[tuple[int, int]] = []
    source.FactsSource(ResultsStore(store.root)).facts(lambda d, t: again.append((d, t)))  # type: ignore[attr-defined]
    assert again in ([], [(0, 30), (30, 30)])  # (nothing to read: no line left open)


def test_the_sentence_around_a_place_is_the_one_the_separators_give() -> None:
    import bisect

    from ebtui.core.analysis.text_facts import sentence_around as _sentence_around
    from ebtui.core.frameworks import sentence_separators as _separators

    def _sentence_at(text: str, pos: int, seps: tuple[list[int], list[int]]) -> str:  # (the separators' reading)
        starts, ends = seps
        i, j = bisect.bisect_right(ends, pos), bisect.bisect_right(starts, pos)
        return text[ends[i - 1] if i else 0:starts[j] if j < len(starts) else len(text)].strip()

    rnd = random.Random(29)
    pieces = [*CUE_PIECES, *PIECES, ".", "!", "?", "?!", "...", "1.5", ".\u00a0", "!\u2028", "?\r\n", ".\x1c"]
    checked = 0
    for _ in range(400):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 25)))
        seps = _separators(text)
        for pos, c in enumerate(text):
            if not c.isspace():  # (a match never starts on a space)
                assert _sentence_around(text, pos) == _sentence_at(text, pos, seps), (text, pos)
                checked += 1
    assert checked > 10_000


def test_prefixes_of_patterns_whose_answer_is_known() -> None:
    from ebtui.core.frameworks import prefixes

    assert prefixes(r"\brefine\w*") == {"refine"}
    assert prefixes(r"\b(?:morally )?relevant differences?\b") == {"morally relevant difference", "relevant difference"}
    assert prefixes(r"\b(?:here|in this case),? i would") == {"here", "in this case"}
    assert prefixes(r"\ba?b") == {"ab", "b"} and prefixes(r"x*y") == {"x", "y"}
    assert prefixes(r"\b(?:ab)+c") == {"ab"}  # (repeated: only its own opening is sure)
    assert prefixes(r"\b[ab]c") is None and prefixes(r"\b\w+ principle") is None and prefixes(r"(?=a)a") is None


def test_cue_search_from_the_automaton_s_places_is_re_search(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ebtui.core.frameworks import CONSISTENCY_CUES, DISAGREEMENT_CUES, AnyOf, fold

    rnd = random.Random(31)
    pieces = [*CUE_PIECES, "I disagree", "i\u0307 was wrong", "ß", "\u017fame principle", "sAme\u00a0principle",
              "push back", "but this ignores", "not analogous", "narrowed my principle"]
    finders = [AnyOf(p) for p in (*CONSISTENCY_CUES.values(), DISAGREEMENT_CUES)]
    assert all(f.auto is not None for f in finders)
    hits = 0
    for _ in range(300):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 20)))
        folded = fold(text)
        for f in finders:
            for pos in range(0, len(text) + 1, 7):
                got, want = f.search(text, folded, pos), f.exact.search(text, pos)
                assert (got and got.span()) == (want and want.span()), (text, pos)
                hits += want is not None
    assert hits > 1000


def test_a_row_s_fixed_size_columns_are_the_bytes_numpy_writes() -> None:
    import numpy as np

    from ebtui.core.analysis import frame, source_read
    from ebtui.core.analysis.frame import NC

    recs = [x for r in _hostile_rounds(40, seed=33) for x in frame.judgment_facts(r)]
    assert any(x["parsed"] is None for x in recs) and any(x["parsed"] is not None for x in recs)
    for x in recs:
        row = source_read.record_row(x, (5, 6))
        s = np.zeros((2, 2, NC), dtype=np.int8)
        if x["parsed"] is not None:
            s[0], s[1] = x["parsed"], x["effective"]
        assert (row["parsed"], row["effective"]) == (s[0].tobytes(), s[1].tobytes())
        assert row["text_len"] == np.asarray(x["text_len"], dtype=np.int32).tobytes()
        assert row["reused"] == np.asarray(x["reused"], dtype=bool).tobytes()
        assert row["fw_bits"] == np.asarray(x["fw_bits"], dtype=np.int16).tobytes()
        assert row["style"] == np.asarray(x["style"], dtype=np.int32).tobytes()


# ---- the Henderson fits made faster, the same floats (variance_fits) -----------------------------------------


@__import__("functools").lru_cache(maxsize=1)
def _vc_rows() -> list:  # type: ignore[type-arg]
    from ebtui.core.analysis.variance import judgment_rows
    from tests.support.sim_vc import generate, planted

    rounds = generate(planted(), dilemmas=8, judges="panel", repeats=2, seed=5)
    return judgment_rows(rounds, lambda m: m)


def _floats(vc: object) -> list[object]:
    """Every value an estimate holds, floats as their exact bits (repr)."""
    from ebtui.core.analysis.variance import VarianceComponents

    assert isinstance(vc, VarianceComponents)
    return [repr(v) for c in vc.components.values() for v in (c.variance, c.low, c.high, c.raw, c.df, c.note)] + [
        vc.source, vc.n_rows, vc.dilemmas, vc.notes]


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="forks on Linux only")
def test_fits_shared_with_a_fork_give_the_same_floats_to_the_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    from ebtui.core.analysis import variance, variance_fits

    rows = _vc_rows()
    monkeypatch.setattr(variance_fits, "FORK_FITS_FROM", float("inf"))
    alone = variance.estimate_components(rows, replicates=0)
    forks: list[int] = []
    real = variance_fits.Forked

    class Spy(real):  # type: ignore[misc,valid-type]
        def __init__(self, work: object) -> None:
            forks.append(1)
            super().__init__(work)  # type: ignore[arg-type]

    monkeypatch.setattr(variance_fits, "Forked", Spy)
    monkeypatch.setattr(variance_fits, "FORK_FITS_FROM", 0.0)
    monkeypatch.setattr(variance_fits, "FORK_FITS_BELOW_RSS", float("inf"))
    monkeypatch.setattr("threading.active_count", lambda: 1)
    shared = variance.estimate_components(rows, replicates=0)
    assert forks, "the fits were not shared with a fork"
    assert _floats(shared) == _floats(alone)
    assert alone.source == "estimated" and alone.components["judge"].variance is not None


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="forks on Linux only")
def test_a_fork_that_fails_leaves_its_fits_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from ebtui.core.analysis import variance, variance_fits

    rows = _vc_rows()
    monkeypatch.setattr(variance_fits, "FORK_FITS_FROM", float("inf"))
    alone = variance.estimate_components(rows, replicates=0)
    here = os.getpid()
    real = variance._fit_terms

    def fails_in_the_child(*args: object) -> object:
        if os.getpid() != here:
            raise MemoryError("the child cannot fit")
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(variance, "_fit_terms", fails_in_the_child)
    monkeypatch.setattr(variance_fits, "FORK_FITS_FROM", 0.0)
    monkeypatch.setattr(variance_fits, "FORK_FITS_BELOW_RSS", float("inf"))
    monkeypatch.setattr("threading.active_count", lambda: 1)
    assert _floats(variance.estimate_components(rows, replicates=0)) == _floats(alone)


def test_no_fork_beside_other_threads_or_in_a_large_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from ebtui.core.analysis import variance_fits

    monkeypatch.setattr("threading.active_count", lambda: 2)
    assert not variance_fits.forkable()
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setattr(variance_fits, "FORK_FITS_BELOW_RSS", 1)
    assert not variance_fits.forkable()


def test_the_gram_matrix_from_counts_is_the_dense_product_to_the_bit() -> None:
    import numpy as np

    from ebtui.core.analysis import variance
    from ebtui.core.analysis.variance_fits import indicator_gram

    d = variance._prepare(_vc_rows())
    names = [f for f in ("dilemma", "model_dilemma", "judge", "judge_model") if f in d.codes]
    for k in range(len(names) + 1):
        inc = names[k:]
        X = np.hstack([d.fixed, *[variance._dummies(*d.codes[f]) for f in inc]])
        G = indicator_gram(d.fixed, [d.codes[f] for f in inc])
        assert G is not None and G.shape == (X.shape[1], X.shape[1])
        assert np.array_equal(G, X.T @ X) and not np.signbit(G).any()
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 5, size=200)
    plain = np.column_stack([np.ones(200), rng.choice([-1.0, 1.0], size=200)])
    X = np.hstack([plain, variance._dummies(codes, 5)])
    assert np.array_equal(indicator_gram(plain, [(codes, 5)]), X.T @ X)
    assert indicator_gram(plain * 0.5, [(codes, 5)]) is None  # not whole numbers: the product decides
    assert indicator_gram(plain * 3.0, [(codes, 5)]) is None


def test_a_round_file_is_read_whole_whatever_its_size(tmp_path: object) -> None:
    import os
    from pathlib import Path

    from ebtui.core.analysis.source_read import _read_whole

    assert isinstance(tmp_path, Path)
    for n in (0, 1, 4096, 3 << 20):  # (past one read's 1 MiB after the stat's size)
        path = tmp_path / f"f{n}.json"
        path.write_bytes(os.urandom(n))
        st, data = _read_whole(str(path))
        assert data == path.read_bytes() and st.st_size == n
    with pytest.raises(OSError):
        _read_whole(str(tmp_path / "gone.json"))
