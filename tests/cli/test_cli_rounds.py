"""`ebtui rounds list / show / override` through click's CliRunner and as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.core.records import RoundStatus
from ebtui.core.store import ResultsStore
from tests.support.factories import make_round, open_store
from tests.support.paths import subprocess_env

HOSTILE = "evil \x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07 [bold red]markup[/bold red] \x9b2J\x00 end"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    s = open_store(root)
    s.save_round(make_round(0, round_id="r-first", dilemma="d1", tournament="t1"))
    hostile = make_round(1, round_id="r-second", dilemma="d2", team_a="beta", team_b="alpha",
                         missing=("consistency",))
    hostile.phases[1].response = HOSTILE
    hostile.judgment.overall_analysis = HOSTILE
    s.save_round(hostile)
    s.save_round(make_round(2, round_id="r-third", dilemma="d1", judged=False, status=RoundStatus.INCOMPLETE,
                            judge="delta"))
    s.close()
    return root


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_list_is_an_aligned_table_with_totals_and_review_flags(root: Path) -> None:
    code, out, _ = _run("rounds", "list", "--store", str(root))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "TIME", "(UTC)", "DILEMMA", "TEAM", "A", "TEAM", "B", "JUDGE", "STATUS",
                                "REVIEW", "A", "B"]
    rows = {line.split()[0]: line for line in lines[2:5]}
    assert set(rows) == {"r-first", "r-second", "r-third"}
    assert rows["r-first"].split()[-2:] == ["35", "42"]  # totals A/B
    assert "review" in rows["r-second"] and rows["r-second"].split()[-2:] == ["—", "42"]
    assert "incomplete" in rows["r-third"] and rows["r-third"].split()[-2:] == ["—", "—"]
    # columns line up: every row has STATUS where the header has it
    col = lines[0].index("STATUS")
    assert all(line[col:].split()[0] in {"complete", "incomplete"} for line in lines[2:5])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--dilemma", "d1"], ["r-first", "r-third"]),
        (["--model", "beta", "--role", "team_a"], ["r-second"]),
        (["--model", "alpha"], ["r-first", "r-second", "r-third"]),
        (["--judge", "delta"], ["r-third"]),
        (["--tournament", "t1"], ["r-first"]),
        (["--status", "incomplete"], ["r-third"]),
        (["--needs-review"], ["r-second"]),
        (["--newest-first", "--limit", "2"], ["r-third", "r-second"]),
    ],
)
def test_list_filters_as_json(root: Path, args: list[str], expected: list[str]) -> None:
    code, out, _ = _run("rounds", "list", "--json", "--store", str(root), *args)
    assert code == 0
    assert [e["id"] for e in json.loads(out)] == expected


def test_store_can_be_given_before_the_subcommand(root: Path) -> None:
    for args in (["--store", str(root), "rounds", "list", "--json"], ["rounds", "--store", str(root), "list", "--json"]):
        code, out, _ = _run(*args)
        assert code == 0 and len(json.loads(out)) == 3
    # and $EBTUI_STORE is the fallback
    result = CliRunner().invoke(cli, ["rounds", "list", "--json"], env={"EBTUI_STORE": str(root)})
    assert result.exit_code == 0 and len(json.loads(result.stdout)) == 3


def test_empty_store_says_so(tmp_path: Path) -> None:
    code, out, err = _run("rounds", "list", "--store", str(tmp_path / "none"))
    assert code == 0 and out == "" and "No rounds match" in err
    assert not (tmp_path / "none").exists()


def test_show_prints_the_transcript_and_the_score_card_with_missing_flagged(root: Path) -> None:
    code, out, _ = _run("rounds", "show", "r-second", "--store", str(root))
    assert code == 0
    order = [out.index(f"== {name}") for name in ("Presentation", "Response", "Rebuttal", "Consistency test",
                                                      "Judgment")]
    assert order == sorted(order)
    assert "Prompt for" not in out  # prompts only with --prompts
    card = out[out.index("CRITERION"):]
    consistency = next(line for line in card.splitlines() if line.startswith("Consistency"))
    # A: parsed missing, effective missing and open for review, read: missing; B: 6, 6, read before provenance
    assert consistency.split() == ["Consistency", "—", "!", "—", "!", "?", "-", "6", "6", "?"]
    assert "missing" in card and "Needs review" in card
    # hostile model text is inert: no escape sequences or control characters reach the terminal
    assert "\x1b" not in out and "\x9b" not in out and "\x00" not in out and "\x07" not in out
    assert "[bold red]markup[/bold red]" in out  # shown literally, never interpreted


def test_show_with_prompts_and_json(root: Path) -> None:
    code, out, _ = _run("rounds", "show", "r-first", "--prompts", "--store", str(root))
    assert code == 0 and "-- system prompt --" in out and "Prompt for presentation" in out
    code, out, _ = _run("rounds", "show", "r-second", "--json", "--store", str(root))
    assert code == 0
    data = json.loads(out)
    assert data["id"] == "r-second" and data["phases"][1]["response"] == HOSTILE  # exact, escaped in JSON
    assert "\x1b" not in out and "\x9b" not in out


def test_show_of_a_round_without_judgment(root: Path) -> None:
    code, out, _ = _run("rounds", "show", "r-third", "--store", str(root))
    assert code == 0 and "No judgment" in out


def test_override_and_clear(root: Path) -> None:
    code, out, _ = _run("rounds", "override", "r-second", "--team", "a", "--criterion", "consistency",
                        "--value", "8", "--note", "read from the prose", "--store", str(root))
    assert code == 0, out
    assert "parsed —, effective 8" in out and "Totals now: A 44, B 42" in out
    round_ = ResultsStore(root).load_round("r-second")
    assert round_.judgment.overrides[-1].note == "read from the prose"
    code, out, _ = _run("rounds", "show", "r-second", "--store", str(root))
    assert "8*" in out and "read from the prose" in out and "Needs review" not in out
    code, out, _ = _run("rounds", "list", "--needs-review", "--json", "--store", str(root))
    assert json.loads(out) == []

    code, out, _ = _run("rounds", "override", "r-second", "--team", "A", "--criterion", "Consistency", "--clear",
                        "--store", str(root))
    assert code == 0 and "cleared" in out and "effective —" in out
    assert [o.value for o in ResultsStore(root).load_round("r-second").judgment.overrides] == [8, None]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["r-first", "--team", "a", "--criterion", "consistency", "--value", "11", "--note", "x"], "1 to 10"),
        (["r-first", "--team", "a", "--criterion", "consistency", "--value", "seven", "--note", "x"], "1 to 10"),
        (["r-first", "--team", "c", "--criterion", "consistency", "--value", "5", "--note", "x"], "unknown team"),
        (["r-first", "--team", "a", "--criterion", "charm", "--value", "5", "--note", "x"], "unknown criterion"),
        (["r-first", "--team", "a", "--criterion", "consistency", "--value", "5"], "note is required"),
        (["r-first", "--team", "a", "--criterion", "consistency"], "either --value N or --clear"),
        (["r-first", "--team", "a", "--criterion", "consistency", "--clear"], "no override to clear"),
        (["r-nope", "--team", "a", "--criterion", "consistency", "--value", "5", "--note", "x"], "r-nope.json"),
        (["../x", "--team", "a", "--criterion", "consistency", "--value", "5", "--note", "x"], "invalid round id"),
    ],
)
def test_override_errors_are_one_line_exit_2(root: Path, args: list[str], message: str) -> None:
    before = (root / "rounds" / "r-first.json").read_bytes()
    code, out, err = _run("rounds", "override", *args, "--store", str(root))
    assert code == 2
    assert err.startswith("ebtui: error:") and message in err and err.count("\n") == 1
    assert (root / "rounds" / "r-first.json").read_bytes() == before


def test_show_errors(root: Path) -> None:
    code, _, err = _run("rounds", "show", "r-missing", "--store", str(root))
    assert code == 2 and "r-missing.json does not exist" in err and err.count("\n") == 1
    (root / "rounds" / "r-broken.json").write_text("{")
    code, _, err = _run("rounds", "show", "r-broken", "--store", str(root))
    assert code == 2 and "r-broken.json" in err and "not a readable round" in err
    code, _, err = _run("rounds", "list", "--role", "judge", "--store", str(root))
    assert code == 2 and "--role needs --model" in err


def test_as_a_real_subprocess(root: Path) -> None:
    env = {**os.environ, "EBTUI_STORE": str(root)}
    exe = [sys.executable, "-m", "ebtui"]
    out = subprocess.run([*exe, "rounds", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and "r-second" in out.stdout
    out = subprocess.run([*exe, "rounds", "override", "r-first", "--team", "b", "--criterion", "framework awareness",
                          "--value", "3", "--note", "subprocess"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert ResultsStore(root).load_round("r-first").judgment.effective_scores("b").framework_awareness == 3
    out = subprocess.run([*exe, "rounds", "show", "r-nope"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2 and "Traceback" not in out.stderr and out.stderr.startswith("ebtui: error:")


# ---- the review checklist through the CLI, over a real store -----------------------------------------------

PROSE_ONLY = (
    "Both teams engaged seriously with the dilemma. Team A built its case on a clear duty of candour and held "
    "to it under pressure; Team B pressed hard on the stakeholders Team A left out. I would not put numbers on "
    "this exchange: it was close, and in my view the difference lay in tone rather than substance."
)


def _judged_round(root: Path, round_id: str, reply: str) -> None:
    from ebtui.core.judgment import parse_judgment

    r = make_round(5, round_id=round_id, dilemma="d9")
    r.judgment = parse_judgment(reply, team_a_id=r.team_a_model, team_b_id=r.team_b_model)
    s = open_store(root)
    s.save_round(r)
    s.close()


def _review_ids(root: Path) -> list[str]:
    code, out, _ = _run("rounds", "list", "--needs-review", "--json", "--store", str(root))
    assert code == 0, out
    return [e["id"] for e in json.loads(out)]


def test_a_round_the_judge_did_not_score_stays_in_review_until_all_14_are_overridden(root: Path) -> None:
    from ebtui.core.records import CRITERIA

    _judged_round(root, "r-noscores", PROSE_ONLY)
    assert "r-noscores" in _review_ids(root)
    pairs = [(t, c) for t in ("a", "b") for c in CRITERIA]
    for n, (team, crit) in enumerate(pairs):
        code, out, err = _run("rounds", "override", "r-noscores", "--team", team, "--criterion", crit,
                              "--value", str(3 + n % 7), "--note", "scored by hand from the prose", "--store", str(root))
        assert code == 0, err
        still = "r-noscores" in _review_ids(root)
        assert still is (n < len(pairs) - 1), (n, team, crit)  # listed until the 14th override, not after
    code, out, _ = _run("rounds", "show", "r-noscores", "--json", "--store", str(root))
    data = json.loads(out)
    j = data["judgment"]
    assert all(v is None for v in j["team_a_scores"].values() if not isinstance(v, int) or v is None)
    assert [j["team_a_scores"][c] for c in CRITERIA] == [None] * 7  # the parsed nulls are kept
    assert [j["team_b_scores"][c] for c in CRITERIA] == [None] * 7
    assert len([o for o in j["overrides"] if o["kind"] == "score"]) == 14
    assert all(o["parsed_value"] is None for o in j["overrides"])


def test_one_override_clears_only_its_own_reason_and_accept_is_recorded(root: Path) -> None:
    # consistency for A read from prose (a guess), B's framework awareness missing
    reply = "\n".join([
        "## Team A",
        "Principle articulation: 8", "Stakeholder recognition: 7", "Uncertainty integration: 6",
        "Framework awareness: 7", "Intellectual honesty: 8", "Constructive engagement: 7",
        "Consistency was mostly steady across the test, so I'd probably give it 6/10.",  # (hedged: read, a guess)
        "## Team B",
        "Principle articulation: 6", "Consistency: 7", "Stakeholder recognition: 8", "Uncertainty integration: 7",
        "Intellectual honesty: 6", "Constructive engagement: 8",
    ])
    _judged_round(root, "r-mixed", reply)
    assert "r-mixed" in _review_ids(root)
    # overriding A's principle (not under review) clears nothing
    code, _, err = _run("rounds", "override", "r-mixed", "--team", "a", "--criterion", "principle_articulation",
                        "--value", "9", "--note", "re-read", "--store", str(root))
    assert code == 0, err
    assert "r-mixed" in _review_ids(root)
    # scoring B's missing framework awareness leaves A's prose-read consistency open
    code, _, err = _run("rounds", "override", "r-mixed", "--team", "b", "--criterion", "framework_awareness",
                        "--value", "7", "--note", "the judge forgot it", "--store", str(root))
    assert code == 0, err
    assert "r-mixed" in _review_ids(root)
    code, out, _ = _run("rounds", "show", "r-mixed", "--store", str(root))
    assert "[ ] Team A Consistency" in out and "[x] Team B Framework awareness" in out
    assert "prose (interpreted)" in out and "so I'd probably give it 6/10" in out  # the source line is printed
    # accepting A's consistency as parsed addresses the last reason, and is recorded
    code, out, err = _run("rounds", "accept", "r-mixed", "--team", "a", "--criterion", "consistency",
                          "--note", "the 6 is what the judge meant", "--store", str(root))
    assert code == 0, err
    assert "r-mixed" not in _review_ids(root)
    saved = ResultsStore(root).load_round("r-mixed").judgment
    acc = [o for o in saved.overrides if o.kind == "accept"]
    assert [(o.team, o.criterion, o.value, o.note) for o in acc] == [("a", "consistency", 6, "the 6 is what the judge meant")]
    assert saved.effective_scores("a").consistency == 6
    # clearing the hand score re-opens B's missing score
    code, _, err = _run("rounds", "override", "r-mixed", "--team", "b", "--criterion", "framework_awareness",
                        "--clear", "--store", str(root))
    assert code == 0, err
    assert "r-mixed" in _review_ids(root)


def test_accept_all_and_its_errors(root: Path) -> None:
    _judged_round(root, "r-noscores", PROSE_ONLY)
    code, _, err = _run("rounds", "accept", "r-noscores", "--store", str(root))
    assert code == 2 and "--all" in err and err.count("\n") == 1
    code, out, err = _run("rounds", "accept", "r-noscores", "--all", "--note", "no scores: excluded", "--store",
                          str(root))
    assert code == 0 and "14 score(s) accepted" in out, err
    assert "r-noscores" not in _review_ids(root)
    code, _, err = _run("rounds", "accept", "r-third", "--all", "--store", str(root))
    assert code == 2 and "no judgment" in err


def test_the_real_ebtui_command_lists_a_round_needing_review(root: Path) -> None:
    _judged_round(root, "r-noscores", PROSE_ONLY)
    env = subprocess_env()
    done = subprocess.run([sys.executable, "-m", "ebtui", "rounds", "list", "--needs-review", "--json", "--store",
                           str(root)], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "r-noscores" in [e["id"] for e in json.loads(done.stdout)]
