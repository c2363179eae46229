"""A synthetic tournament built as Round records (fixed seed), saved as JSON round files, plus the plain-Python
recomputation the analysis and report tests compare against (tests/unit/analysis/test_report.py checks
the generator covers what it must)."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ebtui.core.records import (
    CRITERIA,
    Judgment,
    Override,
    Phase,
    PhaseStatus,
    PhaseType,
    Round,
    RoundStatus,
    Scores,
)

MODELS = ["claude-sonnet", "gpt-5", "gemini-pro", "qwen-max"]
JUDGES = ["claude-judge", "gpt-judge", "gemini-judge"]
DILEMMAS = [("d1", "Embryo screening"), ("d2", "Lifeboat quotas"), ("d3", "Whistleblower's dilemma"),
            ("d4", "Algorithmic triage")]
SKILL = {"claude-sonnet": 7.5, "gpt-5": 7.0, "gemini-pro": 6.2, "qwen-max": 5.5}
JUDGE_BIAS = {"claude-judge": -0.8, "gpt-judge": 0.6, "gemini-judge": 0.0}
SELF_MODELS = ["claude-sonnet", "qwen-max"]

HOSTILE = ("\x1b[31mRED\x1b[0m \x1b]52;c;aGk=\x07 [bold red]shout[/bold red] <script>alert(1)</script> "
           "| pipe | `tick` *star* _under_ [link](javascript:x)")

CONSISTENCY_ANSWERS = {
    "kept_principle": "The same principle applies here. I reach the same conclusion as before.",
    "relevant_difference": "There is a morally relevant difference: consent was given. So my answer changes.",
    "acknowledged_refinement": "This case shows my principle is too broad. I would refine it to cover consent.",
    "inconsistent_unacknowledged": "Here, however, I would not intervene at all. That seems right.",
    "unclassified": "It is a hard case. Many people would disagree about it.",
}

PRESENTATIONS = [
    "A utilitarian analysis weighs the expected welfare of everyone affected. Principle: minimise harm.",
    "We have a duty not to treat anyone merely as a means. Principle: respect persons.",
    "What would a virtuous person do here? Practical wisdom matters. Principle: act with integrity.",
    "An ethics of care asks who depends on whom. Principle: protect the vulnerable.",
]
RESPONSES_AGREE = "I agree with this analysis. It is well argued. The conclusion follows."
RESPONSES_DISAGREE = ("I disagree with the weighting here. The presentation overlooks the families. "
                      "Behind a veil of ignorance we might choose otherwise. The rest is fine.")


def _scores(rng: random.Random, base: float, p_missing: float) -> Scores:
    vals: dict[str, int | None] = {}
    for c in CRITERIA:
        if rng.random() < p_missing:
            vals[c] = None
        else:
            vals[c] = max(1, min(10, round(base + rng.gauss(0, 1.2))))
    return Scores(**vals)


def _phase(pt: PhaseType, model: str, text: str, *, reused_from: str | None = None,
           status: PhaseStatus = PhaseStatus.COMPLETE) -> Phase:
    return Phase(phase_type=pt, model_id=model, response=text if status == PhaseStatus.COMPLETE else "",
                 status=status, timestamp=T0, reused_from=reused_from,
                 error=None if status == PhaseStatus.COMPLETE else "server: scripted fault")


T0 = datetime(2026, 11, 1, tzinfo=UTC)


def make_tournament(seed: int = 20261107, tournament_id: str = "t-synth") -> list[Round]:
    """Several models, dilemmas, all pairings plus two self-debates, a 3-judge panel on every 4th exchange,
    some missing scores, some failed rounds, overrides (one later cleared) and hostile model text."""
    rng = random.Random(seed)
    rounds: list[Round] = []
    pairings = [(a, b) for a in MODELS for b in MODELS if a != b] + [(m, m) for m in SELF_MODELS]
    k = 0
    for d_id, d_title in DILEMMAS:
        for a, b in pairings:
            k += 1
            ex_id = f"x{k:03d}"
            cls = list(CONSISTENCY_ANSWERS)[k % len(CONSISTENCY_ANSWERS)]
            consistency = CONSISTENCY_ANSWERS[cls]
            if k == 7:  # hostile text inside the very sentence the rules quote
                consistency = f"I would refine my principle: {HOSTILE}\nsecond line `x`."
            response = RESPONSES_AGREE if a == b and k % 3 else RESPONSES_DISAGREE
            failed_consistency = k % 17 == 0
            judges = JUDGES if k % 4 == 0 else [JUDGES[k % len(JUDGES)]]
            for j_i, judge in enumerate(judges):
                rid = f"r-{ex_id}-{j_i}"
                reused = None if j_i == 0 else f"r-{ex_id}-0"
                phases = [
                    _phase(PhaseType.PRESENTATION, a, PRESENTATIONS[k % 4], reused_from=reused),
                    _phase(PhaseType.RESPONSE, b, response, reused_from=reused),
                    _phase(PhaseType.REBUTTAL, a, "I thank Team B. The duty remains.", reused_from=reused),
                    _phase(PhaseType.CONSISTENCY_TEST, a, consistency, reused_from=reused,
                           status=PhaseStatus.FAILED if failed_consistency else PhaseStatus.COMPLETE),
                ]
                no_judgment = k % 23 == 0 and j_i == 0
                judgment = None
                status = RoundStatus.COMPLETE
                if failed_consistency:
                    status = RoundStatus.INCOMPLETE
                if no_judgment:
                    status = RoundStatus.INCOMPLETE
                    phases.append(_phase(PhaseType.JUDGMENT, judge, "", status=PhaseStatus.FAILED))
                else:
                    all_missing = k == 30 and j_i == 0
                    p_missing = 1.0 if all_missing else 0.06
                    ja = _scores(rng, SKILL[a] + JUDGE_BIAS[judge] + (0.7 if judge[:3] == a[:3] else 0), p_missing)
                    jb = _scores(rng, SKILL[b] + JUDGE_BIAS[judge] - (0.5 if a == b else 0), p_missing)
                    just_a = "A clear utilitarian case." if k % 2 else "Careful about duties and rights."
                    if k == 1:
                        just_a = f"A Kantian reading {HOSTILE}"
                    judgment = Judgment(team_a_scores=ja, team_b_scores=jb, team_a_justification=just_a,
                                        team_b_justification="Engaged with the veil of ignorance argument.",
                                        judge_model=judge, parse_method="json",
                                        needs_review=bool(ja.missing() or jb.missing()))
                    phases.append(_phase(PhaseType.JUDGMENT, judge, judgment.model_dump_json()))
                rounds.append(Round(
                    id=rid, dilemma_id=d_id, dilemma_title=d_title, team_a_model=a, team_b_model=b,
                    judge_model=judge, phases=phases, judgment=judgment, status=status,
                    tournament_id=tournament_id, exchange_id=ex_id, timestamp=T0 + timedelta(minutes=k),
                    schedule_key=f"{d_id}|{a}|{b}|0|{judge}",
                ))
    _add_overrides(rounds)
    return rounds


def _override(j: Judgment, team: str, crit: str, value: int | None, note: str) -> None:
    j.overrides.append(Override(team=team, criterion=crit, parsed_value=j.parsed_scores(team).as_dict()[crit],
                                value=value, note=note, author="tester", time=T0))


def _add_overrides(rounds: list[Round]) -> None:
    judged = [r for r in rounds if r.judgment is not None and r.judgment.parsed_scores("a").total() is not None]
    # a changed value, on several rounds and both teams
    for r, team, crit, value in ((judged[2], "a", "consistency", 10), (judged[11], "b", "constructive_engagement", 1),
                                 (judged[20], "a", "principle_articulation", 2), (judged[33], "b", "consistency", 9)):
        current = r.judgment.parsed_scores(team).as_dict()[crit]
        _override(r.judgment, team, crit, value if value != current else (value % 10) + 1, "corrected")
    # filling in a score the judge did not give
    for r in rounds:
        j = r.judgment
        if j is not None and j.parsed_scores("b").missing() and len(j.parsed_scores("b").missing()) < 7:
            _override(j, "b", j.parsed_scores("b").missing()[0], 5, "filled <b>in</b>")
            break
    # an override that was later cleared: not in force
    _override(judged[40].judgment, "a", "framework_awareness", 1, "mistake")
    _override(judged[40].judgment, "a", "framework_awareness", None, "cleared")


def save_rounds(rounds: list[Round], root: Path) -> Path:
    """Write one JSON file per round, as the store lays them out (rounds/<id>.json)."""
    d = root / "rounds"
    d.mkdir(parents=True, exist_ok=True)
    for r in rounds:
        (d / f"{r.id}.json").write_text(r.model_dump_json(indent=2), encoding="utf-8")
    return d


# ---- independent recomputation from the saved files (plain Python over the JSON) ------------------------


def load_json_rounds(rounds_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(rounds_dir.glob("*.json"))]


def scores_of(rd: dict[str, Any], team: str, effective: bool) -> dict[str, int | None] | None:
    j = rd.get("judgment")
    if j is None:
        return None
    out = {c: j[f"team_{team}_scores"][c] for c in CRITERIA}
    if effective:
        last: dict[tuple[str, str], Any] = {}
        for ov in j["overrides"]:
            last[(ov["team"], ov["criterion"])] = ov["value"]
        for (t, c), v in last.items():
            if t == team and v is not None:
                out[c] = v
    return out


def mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def group_exchanges(rds: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    g: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rd in rds:
        g[rd["exchange_id"] or rd["id"]].append(rd)
    return dict(sorted(g.items()))


def exchange_crit(group: list[dict[str, Any]], team: str, effective: bool) -> dict[str, float | None]:
    out = {}
    for c in CRITERIA:
        vals = [s[c] for rd in group if (s := scores_of(rd, team, effective)) is not None and s[c] is not None]
        out[c] = mean(vals)
    return out


def exchange_overall(group: list[dict[str, Any]], team: str, effective: bool) -> float | None:
    return mean([v for v in exchange_crit(group, team, effective).values() if v is not None])
