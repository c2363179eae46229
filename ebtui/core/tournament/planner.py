"""Precision planning (`ebtui plan`): for candidate tournament designs (models, judge mode, dilemmas,
repeats), the predicted pairwise half-width, the smallest gap found with 80% power, and the calls and cost
at list and batch price, on each design's real schedule with variance components from saved tournaments
(or the documented defaults) — before anything is called. See docs/TOURNAMENTS.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np

from ebtui.core.analysis.precision import (
    ALPHA,
    POWER,
    detectable_gap,
    power,
    predict_pairs,
    rows_of_exchanges,
)
from ebtui.core.tournament.schedule import Exchange, Schedule, ScheduleError, build_schedule
from ebtui.core.views import numbers as num

if TYPE_CHECKING:
    from ebtui.core.tournament.plan import TournamentPlan

DILEMMA_GRID = (3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32)
REPEATS_GRID = (1, 2, 3)
MAX_DILEMMAS_SEARCHED = 400


class DesignJson(TypedDict):
    """A design as `ebtui plan --json` and the adaptive waves file write it."""

    dilemmas: int
    judge_mode: str
    judges_per_exchange: float
    repeats: int
    half_width: float | None
    half_width_max: float | None
    se: float | None
    detectable_gap: float | None
    power_at_delta: float | None
    calls: int
    cost_usd: float | None
    batch_cost_usd: float | None
    in_document: bool


class PlanAnswer(TypedDict):
    """The cheapest design that finds a gap of `delta` with 80% power."""

    delta: float
    design: DesignJson | None
    enough_dilemmas_in_document: bool
    message: str
    design_within_document: NotRequired[DesignJson]


class TargetAnswer(TypedDict):
    """The uniform design for a half-width target."""

    half_width: float
    design: DesignJson | None
    chance_all_within: float | None
    message: str


class PlanJson(TypedDict):
    """`ebtui plan --json`."""

    models: list[str]
    judge_modes: list[str]
    document_dilemmas: int | None
    alpha: float
    power: float
    delta: float | None
    variance_components: Mapping[str, object]
    designs: list[DesignJson]
    answer: PlanAnswer | None
    target_half_width: TargetAnswer | None
    notes: list[str]
    #: the interval standard the half-widths and power are about (ebtui.core.analysis.pairwise.STANDARD)
    interval_standard: str


@dataclass
class Design:
    dilemmas: int
    judge_mode: str
    repeats: int
    judges_per_exchange: float
    half_width: float | None  # mean over model pairs of the expected 95% half-width
    half_width_max: float | None
    se: float | None
    detectable_gap: float | None
    calls: int
    cost_usd: float | None  # list price
    batch_cost_usd: float | None
    in_document: bool
    power_at_delta: float | None = None
    #: per model pair: the predicted SE the interval will report (for the chance that every one is narrow)
    pair_se: list[float] = field(default_factory=list, repr=False)
    #: per model pair: the interval's predicted degrees of freedom, and how many intervals the table holds
    #: together (the interval standard, ebtui.core.analysis.pairwise.STANDARD)
    pair_df: list[float] = field(default_factory=list, repr=False)
    tests: int = 1

    def chance_all_within(self, width: float) -> float:
        """The chance that every pairwise half-width comes out at most `width`: each half-width is the
        standard's critical value × SE with SE^2 ~ se^2 chi2(df) / df, the pairs taken as independent (a little
        pessimistic: they share dilemmas)."""
        from scipy import stats as st

        from ebtui.core.analysis.pairwise import STANDARD

        if not self.pair_se or self.dilemmas < 3:
            return 0.0
        dfs = self.pair_df or [float(self.dilemmas - 1)] * len(self.pair_se)
        out = 1.0
        for se, df in zip(self.pair_se, dfs, strict=True):
            t = STANDARD.critical(df, self.tests)
            out *= float(st.chi2.cdf((width / (t * se)) ** 2 * df, df))
        return out

    def json(self) -> DesignJson:
        return {"dilemmas": self.dilemmas, "judge_mode": self.judge_mode,
                "judges_per_exchange": self.judges_per_exchange, "repeats": self.repeats,
                "half_width": self.half_width, "half_width_max": self.half_width_max, "se": self.se,
                "detectable_gap": self.detectable_gap, "power_at_delta": self.power_at_delta,
                "calls": self.calls, "cost_usd": self.cost_usd, "batch_cost_usd": self.batch_cost_usd,
                "in_document": self.in_document}


@dataclass
class Pricing:
    """List and batch price of one exchange's calls, per dilemma id and judge mode (one repeat)."""

    per_dilemma: dict[str, dict[str, float]]  # mode -> dilemma id -> list USD for one repeat
    batch_share: dict[str, float]  # mode -> batch price / list price
    dilemma_ids: list[str]
    unpriced: list[str] = field(default_factory=list)

    def cost(self, mode: str, G: int, repeats: int) -> tuple[float | None, float | None]:
        per = self.per_dilemma.get(mode)
        if not per:
            return None, None
        ids = self.dilemma_ids[:G]
        total = sum(per[d] for d in ids)
        if G > len(ids):
            total += (G - len(ids)) * (sum(per.values()) / len(per))
        total *= repeats
        return total, total * self.batch_share.get(mode, 1.0)


def pricing_for(plan: TournamentPlan, modes: Sequence[str]) -> Pricing | None:
    """Per-dilemma prices of a tournament plan's models in each judge mode, from the dry-run estimate."""
    from ebtui.core.batch.estimate import batch_estimate
    from ebtui.core.tournament.plan import estimate_tournament

    cfg = plan.config
    ids = [d.id for d in plan.dilemmas]
    per: dict[str, dict[str, float]] = {}
    share: dict[str, float] = {}
    unpriced: set[str] = set()
    for mode in modes:
        try:
            sched = schedule_for_mode(list(cfg.models), ids, mode,
                                      list(cfg.judges) if isinstance(cfg.judges, list) else None,
                                      self_debates=cfg.self_debates, seed=cfg.seed)
        except ScheduleError:
            continue
        per[mode] = {}
        for d in ids:
            sub = Schedule([ex for ex in sched.exchanges if ex.dilemma_id == d], sched.models, [d], sched.judge_mode)
            est = estimate_tournament(cfg, sub, plan.dilemmas, plan.infos, tournament_id=plan.tournament_id)
            per[mode][d] = est.total_cost_usd
            unpriced.update(est.unpriced_models)
        full = estimate_tournament(cfg, sched, plan.dilemmas, plan.infos, tournament_id=plan.tournament_id)
        b = batch_estimate(replace(plan, schedule=sched), full)
        share[mode] = (b["batch_price_usd"] / b["list_price_usd"]) if b["list_price_usd"] else 1.0
    if not per:
        return None
    return Pricing(per, share, ids, sorted(unpriced))


def design_schedule(models: Sequence[str], G: int, mode: str, repeats: int, *, judges: Sequence[str] | None = None,
                    self_debates: bool = False, seed: int = 0, dilemma_ids: Sequence[str] | None = None) -> Schedule:
    """The schedule a design would play (dilemma ids: the document's first G, then extra-001, ...). Judges:
    the listed ones (else the models); panel: every one of them not playing judges each exchange."""
    ids = list(dilemma_ids[:G]) if dilemma_ids is not None and len(dilemma_ids) >= G else \
        [*(dilemma_ids or [])] + [f"extra-{i + 1:03d}" for i in range(G - len(dilemma_ids or []))]
    return schedule_for_mode(list(models), ids, mode, judges, self_debates=self_debates, repeats=repeats, seed=seed)


def schedule_for_mode(models: list[str], ids: list[str], mode: str, judges: Sequence[str] | None, *,
                      self_debates: bool = False, repeats: int = 1, seed: int = 0) -> Schedule:
    """build_schedule in a judge mode; a panel over an explicit judge list (build_schedule's panel is over the
    models) is the rotation's schedule with every listed judge not playing on each exchange."""
    if mode == "panel" and judges:
        sched = build_schedule(models, ids, judges=list(judges), self_debates=self_debates,
                               rounds_per_pairing=repeats, seed=seed)
        sched.exchanges = [Exchange(ex.dilemma_id, ex.team_a, ex.team_b, ex.repeat,
                                    (*ex.judges, *[j for j in judges
                                                   if j not in (ex.team_a, ex.team_b) and j not in ex.judges]))
                           for ex in sched.exchanges]
        sched.judge_mode = "panel"
        return sched
    return build_schedule(models, ids, judges="panel" if mode == "panel" else (list(judges) if judges else "rotate"),
                          self_debates=self_debates, rounds_per_pairing=repeats, seed=seed)


def evaluate(models: Sequence[str], components: Mapping[str, float], G: int, mode: str, repeats: int, *,
             judges: Sequence[str] | None = None, self_debates: bool = False, seed: int = 0,
             pricing: Pricing | None = None, delta: float | None = None,
             document_dilemmas: int | None = None) -> Design:
    sched = design_schedule(models, G, mode, repeats, judges=judges, self_debates=self_debates, seed=seed,
                            dilemma_ids=pricing.dilemma_ids if pricing else None)
    preds = predict_pairs(rows_of_exchanges(sched.exchanges), components)
    calls = sum(4 + len(ex.judges) for ex in sched.exchanges)
    k = float(np.mean([len(ex.judges) for ex in sched.exchanges]))
    cost, batch = pricing.cost(mode, G, repeats) if pricing else (None, None)
    if not preds:
        return Design(G, mode, repeats, k, None, None, None, None, calls, cost, batch,
                      document_dilemmas is None or G <= document_dilemmas)
    hw = float(np.mean([p.half_width for p in preds]))
    se = float(np.mean([p.se for p in preds]))
    se_true = float(np.mean([p.se_true for p in preds]))
    df = float(np.mean([p.df for p in preds]))
    tests = preds[0].tests
    gap = detectable_gap(se, G, se_true=se_true, df=df, tests=tests)
    return Design(G, mode, repeats, k, hw, float(max(p.half_width for p in preds)), se, gap, calls, cost, batch,
                  document_dilemmas is None or G <= document_dilemmas,
                  power(delta, se, G, se_true=se_true, df=df, tests=tests) if delta is not None else None,
                  [p.se for p in preds], [p.df for p in preds], tests)


def dilemmas_needed(models: Sequence[str], components: Mapping[str, float], mode: str, repeats: int, delta: float,
                    *, judges: Sequence[str] | None = None, self_debates: bool = False, seed: int = 0,
                    wanted: Callable[[Design], bool] | None = None) -> int | None:
    """The fewest dilemmas with which the design finds `delta` with 80% power (None: not within
    MAX_DILEMMAS_SEARCHED). Doubling, then bisection (the detectable gap falls as dilemmas are added)."""
    ok = wanted or (lambda d: d.detectable_gap is not None and d.detectable_gap <= delta)
    last: list[float] = []

    def at(G: int) -> bool:
        d = evaluate(models, components, G, mode, repeats, judges=judges, self_debates=self_debates, seed=seed)
        last.append(d.half_width if d.half_width is not None else float("inf"))
        return ok(d)

    lo, hi = 2, 3
    while not at(hi):
        lo = hi
        hi *= 2
        if hi > MAX_DILEMMAS_SEARCHED:
            return None
        if len(last) >= 3 and last[-1] > 0.97 * last[-2]:
            # doubling the dilemmas no longer narrows the interval: the judges' part (judges as a sample: the
            # judge x model variation, averaged only over more judges) is the floor
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass
class PlanResult:
    models: list[str]
    modes: list[str]
    designs: list[Design]
    document_dilemmas: int | None
    delta: float | None
    answer: PlanAnswer | None
    components: Mapping[str, object]
    notes: list[str] = field(default_factory=list)
    #: with a half-width target: the uniform design chosen for it (see uniform_for_target)
    target: TargetAnswer | None = None

    @property
    def standard(self) -> str:
        """The interval the half-widths and power are about, in words."""
        from ebtui.core.analysis.pairwise import MIN_JUDGES, STANDARD

        m = len(self.models) * (len(self.models) - 1) // 2
        return (STANDARD.describe(m) + f", the judges taken as a sample (judge x model variation included) with "
                f"{MIN_JUDGES}+ judges")

    def json(self) -> PlanJson:
        return {"models": self.models, "judge_modes": self.modes, "document_dilemmas": self.document_dilemmas,
                "alpha": ALPHA, "power": POWER, "delta": self.delta, "variance_components": self.components,
                "designs": [d.json() for d in self.designs], "answer": self.answer,
                "target_half_width": self.target, "notes": self.notes, "interval_standard": self.standard}


def uniform_for_target(models: Sequence[str], components: Mapping[str, float], width: float, *,
                       modes: Sequence[str] = ("rotate", "panel"), repeats: Sequence[int] = REPEATS_GRID,
                       judges: Sequence[str] | None = None, self_debates: bool = False, seed: int = 0,
                       pricing: Pricing | None = None, document_dilemmas: int | None = None) -> Design | None:
    """The uniform design the plan chooses for a half-width target: the cheapest (list price, else calls) with
    even odds that every pairwise half-width comes out at most `width` (Design.chance_all_within). An adaptive
    run (ebtui.core.tournament.adaptive) compares its calls with this design's."""
    found: list[Design] = []
    for mode in modes:
        for r in repeats:
            def ok(d: Design) -> bool:
                return d.chance_all_within(width) >= 0.5

            try:
                need = dilemmas_needed(models, components, mode, r, width, judges=judges,
                                       self_debates=self_debates, seed=seed, wanted=ok)
            except ScheduleError:
                continue
            if need is not None:
                found.append(evaluate(models, components, need, mode, r, judges=judges, self_debates=self_debates,
                                      seed=seed, pricing=pricing, document_dilemmas=document_dilemmas))
    if not found:
        return None
    return min(found, key=lambda d: (d.cost_usd if d.cost_usd is not None else float(d.calls), d.calls))


def make_plan(models: Sequence[str], components: Mapping[str, float], *, judges: Sequence[str] | None = None,
              modes: Sequence[str] = ("rotate", "panel"), repeats: Sequence[int] = REPEATS_GRID,
              dilemma_grid: Sequence[int] = DILEMMA_GRID, document_dilemmas: int | None = None,
              delta: float | None = None, self_debates: bool = False, seed: int = 0,
              pricing: Pricing | None = None, components_json: Mapping[str, object] | None = None,
              half_width: float | None = None) -> PlanResult:
    """Every candidate design; with `delta` the cheapest one that finds it with 80% power; with `half_width`
    the uniform design for that target (uniform_for_target)."""
    notes: list[str] = []
    pool = list(judges) if judges else list(models)
    usable_modes = []
    for mode in modes:
        playing = len([j for j in pool if j in models])
        free = len(pool) - playing + max(0, playing - 2)  # judges free for an exchange between two players
        if mode == "panel" and free < 2:
            notes.append("panel: at most one judge is free for an exchange, the same as rotate; left out")
            continue
        usable_modes.append(mode)
    grid = sorted({g for g in dilemma_grid if g >= 3} | ({document_dilemmas} if document_dilemmas else set()))
    designs: list[Design] = []
    for mode in usable_modes:
        for r in repeats:
            for G in grid:
                designs.append(evaluate(models, components, G, mode, r, judges=judges, self_debates=self_debates,
                                        seed=seed, pricing=pricing, delta=delta, document_dilemmas=document_dilemmas))
    answer = None
    if delta is not None:
        found: list[Design] = []
        for mode in usable_modes:
            for r in repeats:
                need = dilemmas_needed(models, components, mode, r, delta, judges=judges,
                                       self_debates=self_debates, seed=seed)
                if need is not None:
                    d = evaluate(models, components, need, mode, r, judges=judges, self_debates=self_debates,
                                 seed=seed, pricing=pricing, delta=delta, document_dilemmas=document_dilemmas)
                    found.append(d)
                    if all(x.dilemmas != d.dilemmas or x.judge_mode != mode or x.repeats != r for x in designs):
                        designs.append(d)
        designs.sort(key=lambda d: (d.judge_mode, d.repeats, d.dilemmas))
        answer = _answer(delta, found, document_dilemmas)
    target: TargetAnswer | None = None
    if half_width is not None:
        u = uniform_for_target(models, components, half_width, modes=usable_modes, repeats=repeats, judges=judges,
                               self_debates=self_debates, seed=seed, pricing=pricing,
                               document_dilemmas=document_dilemmas)
        target = {"half_width": half_width, "design": u.json() if u else None,
                  "chance_all_within": u.chance_all_within(half_width) if u else None,
                  "message": (f"for every pairwise half-width at most {num.shown(half_width, 'g')} (even odds): {u.dilemmas} "
                              f"dilemmas, {u.judge_mode}, {u.repeats} repeat(s), {u.calls} calls"
                              + ("" if u.in_document else f" — more dilemmas than the document's {document_dilemmas}")
                              if u else f"no design of up to {MAX_DILEMMAS_SEARCHED} dilemmas reaches {num.shown(half_width, 'g')}")}
    return PlanResult(list(models), usable_modes, designs, document_dilemmas, delta, answer,
                      components_json or {}, notes, target)


def _answer(delta: float, found: list[Design], doc: int | None) -> PlanAnswer:
    def key(d: Design) -> tuple[float, int]:
        return (d.cost_usd if d.cost_usd is not None else float(d.calls), d.calls)

    if not found:
        return {"delta": delta, "design": None, "enough_dilemmas_in_document": False,
                "message": f"no design of up to {MAX_DILEMMAS_SEARCHED} dilemmas finds a gap of {num.shown(delta, 'g')} with "
                           "80% power: with the judges taken as a sample, the judge x model variation sets a floor "
                           "that more dilemmas cannot lower — only more judges (or a larger gap) can"}
    best = min(found, key=key)
    inside = [d for d in found if doc is None or d.dilemmas <= doc]
    fewest = min(found, key=lambda d: d.dilemmas)
    msg = (f"to find a gap of {num.shown(delta, 'g')} points with 80% power (α = 0.05): {best.dilemmas} dilemmas, "
           f"{best.judge_mode} judging, {best.repeats} repeat(s) — {best.calls} calls"
           + (f", ${num.fixed(best.cost_usd)} list / ${num.fixed(best.batch_cost_usd)} batch" if best.cost_usd is not None
              and best.batch_cost_usd is not None else "")
           + f"; predicted half-width {num.fixed(best.half_width)}")
    enough = doc is None or best.dilemmas <= doc
    if doc is not None and not inside:
        msg += (f". The document has only {doc} dilemmas; the fewest any design needs is {fewest.dilemmas}: "
                "add dilemmas (another document) — more judges or repeats cannot make up for them")
    elif doc is not None and not enough:
        alt = min(inside, key=key)
        msg += (f". That needs more dilemmas than the document's {doc}; within the document: {alt.dilemmas} "
                f"dilemmas, {alt.judge_mode}, {alt.repeats} repeat(s), {alt.calls} calls")
    out: PlanAnswer = {"delta": delta, "design": best.json(), "enough_dilemmas_in_document": bool(inside),
           "message": msg}
    if doc is not None and inside and not enough:
        out["design_within_document"] = min(inside, key=key).json()
    return out
