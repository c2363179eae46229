"""Re-judging saved rounds: more judgments of transcripts already paid for, with no team call (`ebtui
rejudge`). `plan_rejudge` plans one judgment per target exchange, judge, order and repeat under a
deterministic key, so a resumed run asks only for the rest; each judgment is saved the moment it is parsed
(`ResultsStore.modify_round`), and a failed call is reported, never saved.
Orders, keys and saving: docs/ROUNDS.md, "Several judgments per round, and `ebtui rejudge`".
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, TypedDict

from ebtui.core import prompts
from ebtui.core.facts import exchange_key
from ebtui.core.judgment import JUDGMENT_SCHEMA, parse_judgment
from ebtui.core.records import (
    NO_CONSISTENCY_CASE,
    Dilemma,
    Judgment,
    PhaseStatus,
    PhaseType,
    Round,
    utcnow,
)
from ebtui.providers.base import Completion, ModelClient, ProviderError, Usage

if TYPE_CHECKING:
    from ebtui.core.tournament.costs import Budget, ModelInfo

class RoundModifier(Protocol):
    """What saving a re-judgment needs of a store (ebtui.core.store.ResultsStore provides it)."""

    def modify_round(self, round_id: str, change: Callable[[Round], bool]) -> Round: ...


class JudgeCost(TypedDict):
    """One judge's share of a re-judging plan."""

    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: no price for the judge


OrderMode = Literal["same", "swapped", "balanced"]
ORDER_MODES: tuple[str, ...] = ("same", "swapped", "balanced")
_EXCHANGE = (PhaseType.PRESENTATION, PhaseType.RESPONSE, PhaseType.REBUTTAL, PhaseType.CONSISTENCY_TEST)
NO_CONSISTENCY_TEXT = "(There was no consistency test: this dilemma has no consistency case.)"


def judgment_key(round_id: str, judge: str, order: str, repeat: int,
                 prompt_version: str = prompts.JUDGE_PROMPT_VERSION) -> str:
    """The deterministic key of a planned re-judgment."""
    blob = "\x1f".join((round_id, judge, order, str(repeat), prompt_version))
    return "j-" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class PlannedJudgment:
    round_id: str
    judge: str
    order: str  # "ab" | "ba"
    repeat: int  # 1..K
    key: str
    prompt: str = field(repr=False, default="")
    max_tokens: int | None = None


@dataclass
class RejudgePlan:
    calls: list[PlannedJudgment]  # still to ask
    done: list[PlannedJudgment]  # already in the store (a resumed run skips them)
    skipped: list[tuple[str, str]]  # (round id, why no judgment is planned for it)
    targets: int = 0  # rounds that receive judgments

    def by_judge(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.calls:
            out[c.judge] = out.get(c.judge, 0) + 1
        return out


def _done(r: Round, pt: PhaseType) -> bool:
    ph = r.phase(pt)
    return ph is not None and (ph.status == PhaseStatus.COMPLETE or ph.error_kind == NO_CONSISTENCY_CASE)


def _text(r: Round, pt: PhaseType) -> str:
    ph = r.phase(pt)
    assert ph is not None
    return ph.response if ph.status == PhaseStatus.COMPLETE else NO_CONSISTENCY_TEXT


def round_dilemma(r: Round, dilemmas: Mapping[str, Dilemma] | None = None) -> Dilemma | None:
    """The dilemma as the round played it (its snapshot), else from the given document."""
    if r.settings.dilemma:
        try:
            return Dilemma.model_validate(r.settings.dilemma)
        except ValueError:
            pass
    if r.imported is not None and r.imported.dilemma is not None:
        return r.imported.dilemma
    return (dilemmas or {}).get(r.dilemma_id)


def judge_prompt(r: Round, dilemma: Dilemma, order: str) -> str:
    """The judge prompt for a saved round's transcript, in the given reading order."""
    return prompts.judgment_prompt(
        dilemma, r.team_a_model, _text(r, PhaseType.PRESENTATION), r.team_b_model, _text(r, PhaseType.RESPONSE),
        _text(r, PhaseType.REBUTTAL), _text(r, PhaseType.CONSISTENCY_TEST), blind=r.blind_judge, order=order)


def _targets(rounds: Sequence[Round]) -> tuple[list[Round], list[tuple[str, str]]]:
    """One round per exchange (the one that played phases 1-4 itself), and the rounds left out with why."""
    skipped: list[tuple[str, str]] = []
    groups: dict[str, list[Round]] = {}
    for r in rounds:
        missing = [pt.value for pt in _EXCHANGE if not _done(r, pt)]
        if missing:
            skipped.append((r.id, f"the exchange is not complete ({', '.join(missing)} missing or failed)"))
            continue
        groups.setdefault(exchange_key(r), []).append(r)
    out: list[Round] = []
    for ex in sorted(groups):
        members = sorted(groups[ex], key=lambda r: (any(p.reused_from for p in r.phases), r.id))
        out.append(members[0])
        skipped += [(r.id, f"shares its transcript with {members[0].id} (judgments go there)") for r in members[1:]]
    return out, skipped


def plan_rejudge(
    rounds: Sequence[Round],
    *,
    judges: Sequence[str] | None = None,
    repeats: int = 1,
    order: OrderMode | str = "same",
    allow_own: bool = False,
    dilemmas: Mapping[str, Dilemma] | None = None,
) -> RejudgePlan:
    """What `ebtui rejudge` would ask (see the module docstring). `judges` None: each round's own judge."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if order not in ORDER_MODES:
        raise ValueError(f"order must be one of {', '.join(ORDER_MODES)}, not {order!r}")
    targets, skipped = _targets(rounds)
    calls: list[PlannedJudgment] = []
    done: list[PlannedJudgment] = []
    nth: dict[str, int] = {}
    used: set[str] = set()
    for r in targets:
        dilemma = round_dilemma(r, dilemmas)
        if dilemma is None:
            skipped.append((r.id, "no dilemma snapshot in the round and the dilemma is not in the document"))
            continue
        have = {j.key for j in r.extra_judgments if j.key}
        base = r.judgment.order if r.judgment is not None else "ab"
        for judge in (list(judges) if judges else [r.judge_model]):
            if not allow_own and judge in (r.team_a_model, r.team_b_model):
                skipped.append((r.id, f"{judge} plays in this round (a model never judges its own rounds)"))
                continue
            i = nth.get(judge, 0)
            nth[judge] = i + 1
            for k in range(1, repeats + 1):
                if order == "same":
                    o = base
                elif order == "swapped":
                    o = "ba" if base == "ab" else "ab"
                else:
                    o = "ab" if (i + k) % 2 == 1 else "ba"
                key = judgment_key(r.id, judge, o, k)
                pj = PlannedJudgment(r.id, judge, o, k, key, judge_prompt(r, dilemma, o), r.settings.max_tokens)
                (done if key in have else calls).append(pj)
        used.add(r.id)
    return RejudgePlan(calls, done, skipped, len(used))


@dataclass
class RejudgeResult:
    added: list[PlannedJudgment] = field(default_factory=list)
    already: list[PlannedJudgment] = field(default_factory=list)  # found in the file when saving (a race)
    failed: list[tuple[PlannedJudgment, str]] = field(default_factory=list)
    #: not asked: the budget would have been passed (run again with a larger one)
    over_budget: list[PlannedJudgment] = field(default_factory=list)


def new_judgment(pj: PlannedJudgment, r_team_a: str, r_team_b: str, text: str, *, blind: bool,
                 usage: Usage | None = None, latency: float | None = None) -> Judgment:
    """The re-judgment record from the judge's reply."""
    j = parse_judgment(text, team_a_id=r_team_a, team_b_id=r_team_b)
    j.judge_model = pj.judge
    j.key = pj.key
    j.order = "ba" if pj.order == "ba" else "ab"
    j.prompt_version = prompts.JUDGE_PROMPT_VERSION
    j.judged_at = utcnow()
    j.origin = "rejudge"
    j.repeat = pj.repeat
    j.usage = usage
    j.latency = latency
    j.blind = blind
    return j


def add_judgment(store: RoundModifier, pj: PlannedJudgment, reply: Completion) -> bool:
    """Add one parsed re-judgment to its round on disk (atomic; False: the key was there already)."""
    added = False

    def change(r: Round) -> bool:
        nonlocal added
        if any(j.key == pj.key for j in r.extra_judgments):
            return False
        r.extra_judgments.append(new_judgment(pj, r.team_a_model, r.team_b_model, reply.text, blind=r.blind_judge,
                                              usage=reply.usage, latency=reply.latency_s))
        added = True
        return True

    store.modify_round(pj.round_id, change)
    return added


async def run_rejudge(
    plan: RejudgePlan,
    store: RoundModifier,
    clients: Mapping[str, ModelClient],
    *,
    concurrency: int = 8,
    on_done: Callable[[PlannedJudgment, str], None] | None = None,
    budget: Budget | None = None,
    cost_of: Callable[[PlannedJudgment], float] | None = None,
) -> RejudgeResult:
    """Ask the judges for the plan's judgments (only judge calls), saving each as it arrives.

    `on_done(call, outcome)` is told "added", "already", "over budget" or the error of each call. With a
    `budget` (ebtui.core.tournament.costs.Budget) each call first reserves its estimated cost (`cost_of`) and
    is not asked when that would pass the limit; its actual cost settles the reservation."""
    missing = sorted({c.judge for c in plan.calls if c.judge not in clients})
    if missing:
        raise ValueError(f"no client for judge(s): {', '.join(missing)}")
    result = RejudgeResult()
    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(pj: PlannedJudgment) -> None:
        client = clients[pj.judge]
        schema = JUDGMENT_SCHEMA if client.supports_json_schema else None
        async with sem:
            estimate = cost_of(pj) if cost_of is not None else 0.0
            if budget is not None and not budget.try_reserve(estimate):
                result.over_budget.append(pj)
                if on_done:
                    on_done(pj, "over budget: not asked")
                return
            try:
                reply = await client.generate(pj.prompt, prompts.SYSTEM_PROMPT, json_schema=schema,
                                              max_tokens=pj.max_tokens)
            except ProviderError as exc:
                if budget is not None:
                    budget.settle(estimate, None)
                result.failed.append((pj, str(exc)))
                if on_done:
                    on_done(pj, f"failed: {exc}")
                return
            if budget is not None:
                budget.settle(estimate, reply.usage.cost_usd)
        if not reply.text.strip():
            result.failed.append((pj, "empty answer"))
            if on_done:
                on_done(pj, "failed: empty answer")
            return
        added = await asyncio.to_thread(add_judgment, store, pj, reply)
        (result.added if added else result.already).append(pj)
        if on_done:
            on_done(pj, "added" if added else "already")

    await asyncio.gather(*(one(pj) for pj in plan.calls))
    return result


def call_cost(pj: PlannedJudgment, infos: Mapping[str, ModelInfo], *, output_tokens: int = 1024) -> float:
    """One planned call's estimated list-price cost (0.0 for a judge without a price)."""
    from ebtui.core.tournament.costs import estimate_tokens

    info = infos.get(pj.judge)
    tin = estimate_tokens(pj.prompt) + estimate_tokens(prompts.SYSTEM_PROMPT)
    cost = info.cost(tin, pj.max_tokens or output_tokens) if info is not None else None
    return float(cost or 0.0)


def estimate_cost(plan: RejudgePlan, infos: Mapping[str, ModelInfo], *,
                  output_tokens: int = 1024) -> dict[str, object]:
    """Tokens and list-price cost of the plan's calls, per judge (None where a judge has no price)."""
    from ebtui.core.tournament.costs import estimate_tokens

    per: dict[str, JudgeCost] = {}
    sys_tokens = estimate_tokens(prompts.SYSTEM_PROMPT)
    for c in plan.calls:
        row = per.setdefault(c.judge, {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0})
        row["calls"] += 1
        tin = estimate_tokens(c.prompt) + sys_tokens
        tout = c.max_tokens or output_tokens
        row["input_tokens"] += tin
        row["output_tokens"] += tout
        info = infos.get(c.judge)
        cost = info.cost(tin, tout) if info is not None else None
        row["cost_usd"] = None if cost is None or row["cost_usd"] is None else row["cost_usd"] + cost
    priced = [r["cost_usd"] for r in per.values() if r["cost_usd"] is not None]
    return {"judges": per, "calls": len(plan.calls), "total_usd": sum(priced),
            "unpriced": sorted(j for j, r in per.items() if r["cost_usd"] is None)}
