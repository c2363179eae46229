"""Several judgments per round (`ebtui rejudge` adds them after the round): every export carries each one,
with its judgment index (0 = the round's own)."""

from __future__ import annotations

from typing import Any

import pytest

from ebtui.core.export.tidy import round_judgments, scores_table
from ebtui.core.records import CRITERIA, Judgment, Round, Scores
from ebtui.core.store import ResultsStore
from tests.support.export_support import shared_tournament


def _rejudged() -> tuple[Round, Judgment]:
    info = shared_tournament()
    r = next(r for r in ResultsStore(info["root"]).load_rounds(tournament=info["tid"])
             if r.judgment is not None and r.judgment.parsed_scores("a").total() is not None)
    later = Judgment(team_a_scores=Scores(**{c: 3 for c in CRITERIA}),
                     team_b_scores=Scores(**{c: (9 if c != "consistency" else None) for c in CRITERIA}),
                     judge_model="judge-two", raw_response='{"a": 3} <b>later</b>', parse_method="json")
    data: dict[str, Any] = r.model_dump(mode="json")
    data["extra_judgments"] = [later.model_dump(mode="json")]
    return Round.model_validate(data), later


def test_every_judgment_is_rows_with_its_index() -> None:
    r, later = _rejudged()
    assert [j.judge_model for j in round_judgments(r)] == [r.judgment.judge_model, "judge-two"]
    rows = scores_table([r]).as_dicts()
    assert len(rows) == 2 * 2 * len(CRITERIA)
    second = [row for row in rows if row["judgment_index"] == 1]
    assert {row["judge"] for row in second} == {"judge-two"}
    got = {(row["team"], row["criterion"]): row["effective"] for row in second}
    assert got == {(t, c): getattr(later.effective_scores(t), c) for t in "ab" for c in CRITERIA}
    assert got[("b", "consistency")] is None  # missing stays missing
    first = {(row["team"], row["criterion"]): row["parsed"] for row in rows if row["judgment_index"] == 0}
    assert first == {(t, c): getattr(r.judgment.parsed_scores(t), c) for t in "ab" for c in CRITERIA}


def test_the_inspect_log_scores_every_judgment() -> None:
    pytest.importorskip("inspect_ai.log", reason="the Inspect export needs inspect_ai: pip install -e '.[inspect]'")
    from ebtui.core.export.inspect_log import build_eval_log

    r, later = _rejudged()
    log = build_eval_log([r])
    (sample,) = log.samples
    assert set(sample.scores) == {f"team_a/{r.judge_model}", f"team_b/{r.judge_model}", "team_a/judge-two#1",
                                  "team_b/judge-two#1"}
    assert sample.scores["team_b/judge-two#1"].value == later.effective_scores("b").as_dict()
    assert sample.scores["team_b/judge-two#1"].metadata["judgment_index"] == 1
    replies = [m for m in sample.messages if m.role == "assistant" and m.model == "judge-two"]
    assert [m.text for m in replies] == ['{"a": 3} <b>later</b>']
