"""The audit's draw: a seeded uniform random sample, without replacement, of the judgments (a round's own
judgment and every re-judgment) that gave at least one score. The same seed on the same judgments gives the
same draw; the draw's order is the order a person scores them in."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ebtui.core.audit.records import PRIMARY, Audit, DrawnJudgment, judgment_ref
from ebtui.core.records import CRITERIA, Judgment, Round


def judgment_id(round_: Round, judgment: Judgment) -> str:
    """PRIMARY for the round's own judgment, else the re-judgment's key."""
    return PRIMARY if judgment is round_.judgment else judgment.key


def judgments_of(round_: Round) -> list[tuple[str, Judgment]]:
    """(judgment id, judgment) of every judgment of the round that gave at least one score."""
    out = []
    for j in round_.all_judgments():
        if any(getattr(j.parsed_scores(t), c) is not None for t in ("a", "b") for c in CRITERIA):
            out.append((judgment_id(round_, j), j))
    return out


def population(rounds: Iterable[Round]) -> list[str]:
    """Every scored judgment of the rounds, as sorted refs ("<round id>#<judgment id>")."""
    return sorted(judgment_ref(r.id, jid) for r in rounds for jid, _ in judgments_of(r))


def split_ref(ref: str) -> DrawnJudgment:
    rid, _, jid = ref.partition("#")
    return DrawnJudgment(round_id=rid, judgment_id=jid)


def draw(rounds: Sequence[Round], n: int, seed: int, *, tournament: str | None = None) -> Audit:
    """A new audit of n judgments drawn uniformly from the rounds' scored judgments (ValueError: n is not
    between 1 and their number)."""
    pop = population(rounds)
    if not pop:
        raise ValueError("no judged round with a score to audit")
    if not 1 <= n <= len(pop):
        raise ValueError(f"--n {n}: choose between 1 and {len(pop)} (the scored judgments there are)")
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(pop), size=n, replace=False)
    return Audit(seed=seed, tournament=tournament, population=pop, judgments=[split_ref(pop[int(i)]) for i in picks])
