"""Round files in the shape the public Ethics Bowl runner writes, made from this project's own text.

The scores are known (the truth), the judge reply is written in that runner's requested layout, and the
runner's recorded `judgment` is computed the way that runner computed it: a criterion missing from a team's
block is recorded as 5 with a `parse_errors` line, and an out-of-range number is clamped to 1-10.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ebtui.core.records import CRITERIA  # the runner names its seven criteria exactly as ebtui does

LABELS = {c: c.replace("_", " ").title() for c in CRITERIA}

DILEMMAS = {
    "lighthouse_keeper": dict(
        title="The Lighthouse Keeper",
        category="Duty And Care",
        scenario="A keeper on a remote island can either keep the lamp lit through a storm or row out to a "
                 "capsized dinghy whose two passengers she can see. If the lamp goes dark, a ferry may miss "
                 "the channel.",
        questions=["Should she leave the lamp?", "Does it matter that the ferry is only probably at sea?",
                   "Would a standing order from the harbour master change the answer?"],
        features={"hidden_fact": "The ferry captain has radar but rarely uses it."},
        case="A night nurse must choose between watching a ward monitor and helping a patient who fell in "
             "the corridor.",
        parallel="A certain nearby need against an uncertain larger one",
    ),
    "orchard_ledger": dict(
        title="The Orchard Ledger",
        category="Fairness",
        scenario="A cooperative orchard finds that its founding members have been paid twice for the same "
                 "harvest for a decade. Repaying would ruin two elderly members.",
        questions=["What does the cooperative owe its newer members?"],
        features={},
        case="A library discovers that a patron was undercharged for years by a software error.",
        parallel="Past errors that benefited some members at others' expense",
    ),
}


def presentation_prompt(d: dict[str, Any]) -> str:
    qs = "\n".join(f"- {q}" for q in d["questions"])
    return (f"## Your Role: Presenting Team\n\nYou present first.\n\n## The Dilemma: {d['title']}\n\n"
            f"**Category:** {d['category']}\n\n{d['scenario']}\n\n## Questions to Address:\n{qs}\n\n"
            "## Your Task:\n\nReason it through.")


def response_prompt(d: dict[str, Any], presentation: str) -> str:
    extra = ""
    if d["features"]:
        extra = "\n\n## Additional Context (not shared with presenting team):\n" + "".join(
            f"- **{k.replace('_', ' ').title()}**: {v}\n" for k, v in d["features"].items())
    return (f"## Your Role: Responding Team\n\nYou respond.\n\n## The Dilemma: {d['title']}\n\n"
            f"**Category:** {d['category']}\n\n{d['scenario']}\n{extra}\n\n## The Presenting Team's Analysis:\n\n"
            f"<presenting_team_analysis>\n{presentation}\n</presenting_team_analysis>\n\n## Your Task:\n\nEngage.")


def consistency_prompt(d: dict[str, Any], own: str, team_b: bool = False) -> str:
    head = "## Consistency Test (Responding Team)" if team_b else "## Consistency Test"
    return (f"{head}\n\nIn your {'response to' if team_b else 'presentation on'} \"{d['title']}\", you took a "
            f"view.\n\n## Your Stated Position:\n\n{own}\n\n## A Structurally Similar Case:\n\n"
            "Consider the following case, which shares structural features with the original dilemma:\n\n"
            f"{d['case']}\n\n**Structural Parallel**: {d['parallel']}\n\n## Your Task:\n\nApply your principles.")


def judge_reply(team_a: str, team_b: str, a: dict[str, Any], b: dict[str, Any]) -> str:
    """The runner's requested layout; a criterion absent from a dict is left out of the reply."""
    def block(team: str, model: str, scores: dict[str, Any]) -> str:
        lines = [f"### Team {team} Scores ({model})"]
        lines += [f"- {LABELS[c]}: {scores[c]}" for c in CRITERIA if c in scores]
        return "\n".join(lines)

    return (f"{block('A', team_a, a)}\n\n### Team A Justification\nA kept its principle in view across the "
            f"follow-up case.\n\n{block('B', team_b, b)}\n\n### Team B Justification\nB found the weakest "
            "assumption and pressed on it.\n\n### Overall Analysis\nA careful exchange on both sides.")


def runner_scores(given: dict[str, Any], team: str) -> tuple[dict[str, int], list[str]]:
    """What that runner recorded for one team: clamped to 1-10; 5 plus an error line where it found none."""
    out: dict[str, int] = {}
    errors: list[str] = []
    for c in CRITERIA:
        if c in given:
            out[c] = max(1, min(10, int(given[c])))
        else:
            out[c] = 5
            errors.append(f"Could not parse {c} for Team {team}")
    return out, errors


def make_round(n: int, dilemma_id: str, team_a: str, team_b: str, judge: str, a: dict[str, Any],
               b: dict[str, Any], *, start: datetime | None = None, status: str = "complete") -> dict[str, Any]:
    d = DILEMMAS[dilemma_id]
    start = start or datetime(2026, 3, 1, 9, 0, 0) + timedelta(minutes=10 * n)
    rid = str(uuid.UUID(int=0xE1B0_0000_0000_0000_0000_0000_0000 + n))
    texts = {
        "presentation": f"Presentation {n}: the keeper's first duty is to the people she can see.",
        "response": f"Response {n}: the unseen ferry passengers are no less real.",
        "rebuttal": f"Rebuttal {n}: I accept that probability matters, and refine my view.",
        "consistency_test": f"Consistency {n}: the nurse case runs the same way for me.",
        "consistency_test_b": f"Consistency B {n}: my objection applies to the nurse too.",
    }
    reply = judge_reply(team_a, team_b, a, b)
    prompts = {
        "presentation": presentation_prompt(d),
        "response": response_prompt(d, texts["presentation"]),
        "rebuttal": f"## Your Role: Presenting Team (Rebuttal)\n\n{texts['response']}",
        "consistency_test": consistency_prompt(d, texts["presentation"]),
        "consistency_test_b": consistency_prompt(d, texts["response"], team_b=True),
        "judgment": f"## Your Role: Ethics Bowl Judge\n\n## The Dilemma: {d['title']}\n\nJudge it.",
    }
    speakers = {"presentation": team_a, "response": team_b, "rebuttal": team_a, "consistency_test": team_a,
                "consistency_test_b": team_b, "judgment": judge}
    phases = []
    t = start
    for i, (pt, model) in enumerate(speakers.items()):
        seconds = 3.5 + i
        t = t + timedelta(seconds=seconds)
        inp, out = 100 * (i + 1), 40 * (i + 2)
        phases.append({
            "phase_type": pt, "model_id": model, "prompt": prompts[pt],
            "response": reply if pt == "judgment" else texts[pt],
            "timestamp": t.isoformat(), "response_time_seconds": seconds,
            "tokens_used": inp + out, "input_tokens": inp, "output_tokens": out,
        })
    sa, ea = runner_scores(a, "A")
    sb, eb = runner_scores(b, "B")
    return {
        "id": rid, "dilemma_id": dilemma_id, "team_a_model": team_a, "team_b_model": team_b,
        "judge_model": judge, "phases": phases,
        "judgment": {"team_a_scores": sa, "team_b_scores": sb,
                     "team_a_justification": "A kept its principle in view across the follow-up case.",
                     "team_b_justification": "B found the weakest assumption and pressed on it.",
                     "overall_analysis": "A careful exchange on both sides.", "parse_errors": ea + eb},
        "status": status, "next_phase": None, "timestamp": start.isoformat(), "error": None,
        "is_self_debate": team_a == team_b,
    }


MODELS = ("alpha-1", "beta-2.5", "gamma-3")


def make_run(seed: int = 7) -> list[dict[str, Any]]:
    """Six rounds over three models (each plays both seats), two dilemmas; round 3 has a criterion the
    judge left out for Team B (the runner recorded 5), round 5 an out-of-range 12 the runner clamped to 10."""
    import random

    rng = random.Random(seed)
    pairs = [(0, 1, 2), (1, 2, 0), (2, 0, 1), (1, 0, 2), (2, 1, 0), (0, 2, 1)]
    rounds = []
    for n, (ia, ib, ij) in enumerate(pairs, 1):
        a = {c: rng.randint(4, 10) for c in CRITERIA}
        b = {c: rng.randint(4, 10) for c in CRITERIA}
        if n == 3:
            del b["intellectual_honesty"]
            del b["consistency"]
        if n == 5:
            a["framework_awareness"] = 12
        dilemma = "lighthouse_keeper" if n % 2 else "orchard_ledger"
        rounds.append(make_round(n, dilemma, MODELS[ia], MODELS[ib], MODELS[ij], a, b))
    return rounds


def short(model: str) -> str:
    return model.replace(".", "").replace("-", "")


def write_run(folder: Path, rounds: list[dict[str, Any]]) -> list[Path]:
    """Write the rounds as that runner does: one indented .json per round plus all_rounds.jsonl."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    with (folder / "all_rounds.jsonl").open("w", encoding="utf-8") as fh:
        for r in rounds:
            fh.write(json.dumps(r) + "\n")
    for i, r in enumerate(rounds, 1):
        name = (f"{i:03d}_{r['dilemma_id'].replace('_', '-')}_{short(r['team_a_model'])}-vs-"
                f"{short(r['team_b_model'])}_judge-{short(r['judge_model'])}.json")
        p = folder / name
        p.write_text(json.dumps(r, indent=2), encoding="utf-8")
        paths.append(p)
    return paths
