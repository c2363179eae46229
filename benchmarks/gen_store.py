"""A fast generator of realistic stores for the analysis benchmark (benchmarks/bench_analysis.py).

`python -m benchmarks.gen_store DIR --rounds N [--models M] [--dilemmas D] [--seed S] [--rejudged F]`

Rounds are real `Round` records (phases with prompts and answers of realistic length, a judgment with the
scores, justifications and a raw reply), written in the store's own format (`round_bytes`, one file per
round) without the store's per-save fsync and index batching; index.json is then written once from
`index_entry` of every round, in the TinyDB layout the store reads. The next `ResultsStore` open checks each
file's size and mtime against it (a stat per file, no parse) and notes that the index matches.

Scores come from a planted truth (model skill, judge severity, seat, dilemma difficulty, noise), so the
report has something to find. The texts are assembled from a small pool of sentences written for this
benchmark, some of which mention moral frameworks or consistency cues, so the text analyses have work to do.
`--rejudged F`: a share F of the rounds also holds a re-judgment by another judge with Team B's material read
first (as `ebtui rejudge --order swapped` with another judge stores it), so every analysis has several
judgments per round to count.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ebtui.core.records import CRITERIA, Judgment, Phase, PhaseStatus, PhaseType, Round, RoundStatus, Scores
from ebtui.core.store.entries import INDEX_FORMAT, index_entry
from ebtui.core.store.files import round_bytes, stamp_of

MODEL_NAMES = ("claude-a", "gpt-b", "gemini-c", "llama-d", "mistral-e", "qwen-f", "deepseek-g", "grok-h",
               "claude-i", "gpt-j", "gemini-k", "phi-l")

SENTENCES = (
    "The central question is whether the organisation may put its own survival ahead of the people it serves.",
    "A utilitarian reading asks which choice produces the greatest good for the greatest number.",
    "We hold that every person has rights that cannot be traded away for aggregate benefit.",
    "A virtuous person would show practical wisdom here rather than follow a rule mechanically.",
    "The relationships of care between the nurse and the patient matter to what is owed.",
    "Principles that no one could reasonably reject would forbid deceiving the tenants.",
    "We are uncertain about the long-term effects, and that uncertainty should temper the conclusion.",
    "The stakeholders include the families, the staff, the regulator and the wider public.",
    "Our opponents raise a fair point about the cost of delay, which we accept.",
    "The duty to tell the truth weighs heavily when the person asks directly.",
    "In the new case the same principle applies, and we reach the same conclusion.",
    "The cases differ in a morally relevant way: here nobody consented to the risk.",
    "On reflection our principle needs refinement, since it proves too much in this case.",
    "Expected welfare is higher under the second option, but the distribution is unfair.",
    "Treating the workers merely as a means to an end would be wrong.",
    "Honesty about what we do not know is part of a credible answer.",
    "A cost-benefit analysis cannot settle a question about dignity.",
    "We would revise our view if the evidence about harm turned out to be stronger.",
    "The community has obligations to the people who rely on it.",
    "This is the kind of trade-off that reasonable people weigh differently.",
)


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(SENTENCES) for _ in range(n))


def make_round(k: int, rng: random.Random, *, dilemma: str, a: str, b: str, judge: str, skill: dict[str, float],
               severity: dict[str, float], difficulty: float, t0: datetime, tournament: str) -> Round:
    scores: dict[str, Scores] = {}
    for team, m in (("a", a), ("b", b)):
        base = skill[m] + severity[judge] + difficulty + (0.15 if team == "a" else -0.15)
        vals: dict[str, int | None] = {}
        for c in CRITERIA:
            v = int(max(1, min(10, round(base + rng.gauss(0, 1.0)))))
            vals[c] = None if rng.random() < 0.01 else v  # a judge sometimes leaves a criterion out
        scores[team] = Scores(**vals)
    ts = t0 + timedelta(seconds=k)
    phases = [
        Phase(phase_type=pt, model_id=who, prompt=f"Dilemma {dilemma}. " + _text(rng, 4), response=_text(rng, n),
              status=PhaseStatus.COMPLETE, timestamp=ts, finished_at=ts, attempts=1, latency=1.0)
        for pt, who, n in ((PhaseType.PRESENTATION, a, 12), (PhaseType.RESPONSE, b, 10),
                           (PhaseType.REBUTTAL, a, 8), (PhaseType.CONSISTENCY_TEST, a, 6),
                           (PhaseType.JUDGMENT, judge, 6))
    ]
    judgment = Judgment(team_a_scores=scores["a"], team_b_scores=scores["b"],
                        team_a_justification=_text(rng, 3), team_b_justification=_text(rng, 3),
                        overall_analysis=_text(rng, 2), raw_response=_text(rng, 6), parse_method="json",
                        judge_model=judge)
    return Round(id=f"r-{k:07d}", dilemma_id=dilemma, dilemma_title=f"Dilemma {dilemma}", team_a_model=a,
                 team_b_model=b, judge_model=judge, phases=phases, judgment=judgment, timestamp=ts,
                 finished_at=ts, status=RoundStatus.COMPLETE, tournament_id=tournament,
                 exchange_id=f"x-{k:07d}", schedule_key=f"{dilemma}|{a}|{b}|{k}|{judge}")


def rejudgment(r: Round, rng: random.Random, *, judge: str, skill: dict[str, float], severity: dict[str, float],
               difficulty: float) -> Judgment:
    """Another judge's judgment of the round's transcript, Team B read first (origin "rejudge")."""
    scores: dict[str, Scores] = {}
    for team, m in (("a", r.team_a_model), ("b", r.team_b_model)):
        base = skill[m] + severity[judge] + difficulty + (0.15 if team == "a" else -0.15)
        scores[team] = Scores(**{c: int(max(1, min(10, round(base + rng.gauss(0, 1.0))))) for c in CRITERIA})
    return Judgment(team_a_scores=scores["a"], team_b_scores=scores["b"], team_a_justification=_text(rng, 3),
                    team_b_justification=_text(rng, 3), overall_analysis=_text(rng, 2), raw_response=_text(rng, 6),
                    parse_method="json", judge_model=judge, key=f"{judge}-ba-1", order="ba", origin="rejudge",
                    repeat=1)


def generate(root: Path, rounds: int, *, models: int = 8, dilemmas: int = 20, seed: int = 1,
             tournaments: int = 2, rejudged: float = 0.0) -> dict[str, float]:
    """Write `rounds` rounds and their index under `root`; returns timings (seconds)."""
    t_start = time.perf_counter()
    rng = random.Random(seed)
    names = list(MODEL_NAMES[:models])
    skill = {m: 6.0 + rng.gauss(0, 0.6) for m in names}
    severity = {m: rng.gauss(0, 0.4) for m in names}
    d_ids = [f"d{i + 1:02d}" for i in range(dilemmas)]
    difficulty = {d: rng.gauss(0, 0.4) for d in d_ids}
    rounds_dir = root / "rounds"
    rounds_dir.mkdir(parents=True, exist_ok=True)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    table: dict[str, dict[str, object]] = {}
    for k in range(rounds):
        a, b = rng.sample(names, 2)
        judge = rng.choice([m for m in names if m not in (a, b)])
        d = d_ids[k % dilemmas]
        r = make_round(k, rng, dilemma=d, a=a, b=b, judge=judge, skill=skill, severity=severity,
                       difficulty=difficulty[d], t0=t0, tournament=f"t-{k % tournaments}")
        if rejudged and rng.random() < rejudged:
            other = rng.choice([m for m in names if m not in (a, b, judge)])
            r.extra_judgments.append(rejudgment(r, rng, judge=other, skill=skill, severity=severity,
                                                difficulty=difficulty[d]))
        path = rounds_dir / f"{r.id}.json"
        path.write_bytes(round_bytes(r))
        stamp = stamp_of(os.stat(path))
        table[str(k + 1)] = index_entry(r, path=f"rounds/{r.id}.json", stamp=stamp, saved_ns=stamp[1])
    t_files = time.perf_counter()
    data = {"rounds": table, "meta": {"1": {"format": INDEX_FORMAT, "rounds": rounds, "written_ns": time.time_ns()}}}
    (root / "index.json").write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    return {"files_s": t_files - t_start, "index_s": time.perf_counter() - t_files}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", type=Path)
    p.add_argument("--rounds", type=int, required=True)
    p.add_argument("--models", type=int, default=8)
    p.add_argument("--dilemmas", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rejudged", type=float, default=0.0, help="share of rounds with a re-judgment (0-1)")
    a = p.parse_args()
    print(json.dumps(generate(a.root, a.rounds, models=a.models, dilemmas=a.dilemmas, seed=a.seed,
                              rejudged=a.rejudged)))


if __name__ == "__main__":
    main()
