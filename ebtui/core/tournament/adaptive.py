"""Adaptive tournaments: after the first pass, add the wave of work (new dilemmas, half dilemmas, one more
judge, repeats) predicted to bring the widest pairwise interval to the target at least cost, and stop when it
is met, the budget or the uniform design's calls are reached, the planned looks are used up, or nothing
narrows it, saying which. Its intervals are anytime-valid (ebtui.core.analysis.sequential), so they hold
whenever it stops. Rules and stop reasons: docs/TOURNAMENTS.md, "Adaptive tournaments".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Unpack

import numpy as np

from ebtui.core.records import Round, RoundStatus, Tournament, TournamentStatus
from ebtui.core.tournament.costs import Budget, configured_families, round_cost
from ebtui.core.tournament.events import Progress, TournamentEvent, TournamentFinished
from ebtui.core.tournament.schedule import Exchange, Schedule, build_schedule
from ebtui.core.tournament.waves import (
    AdaptiveMessage,
    AdaptiveState,
    Measurement,
    Wave,
    WaveExchange,
    WaveOption,
    ex_json,
    extended,
    load_state,
    save_state,
    waves_path,
)
from ebtui.core.views import numbers as num

if TYPE_CHECKING:
    from ebtui.core.analysis.sequential import LookPlan
    from ebtui.core.store import ResultsStore
    from ebtui.core.tournament.plan import TournamentPlan
    from ebtui.core.tournament.planner import DesignJson
    from ebtui.core.tournament.runner import PaceOptions, RunOptions, TournamentRunner
    from ebtui.providers.base import ModelClient

__all__ = ["AdaptiveMessage", "AdaptiveRunner", "AdaptiveState", "Measurement", "Wave", "WaveExchange", "WaveOption",
           "extended", "load_state", "waves_path"]

MAX_REPEATS = 8
#: the wave kinds that add dilemmas: with every pairing, or with each pair meeting once (one ordering)
NEW_DILEMMAS = ("dilemmas", "half_dilemmas")
#: a wave must be predicted to narrow the widest interval by at least this share to be worth its cost
MIN_NARROWING = 0.02

STOP_TARGET = "target_reached"
STOP_BUDGET = "budget_reached"
STOP_NOTHING = "nothing_narrows"
STOP_CANCELLED = "cancelled"
STOP_INCOMPLETE = "rounds_incomplete"
STOP_MAX_WAVES = "max_waves"  # runs before the looks were capped (waves files may still say so)
STOP_MAX_LOOKS = "looks_used"
STOP_UNIFORM = "uniform_size_reached"


@dataclass
class _Candidate:
    kind: str
    units: int
    exchanges: list[Exchange]  # the exchanges as they will be (judges: full list)
    new_judgments: list[tuple[Exchange, str]]  # (exchange, judge) judgments added
    new_exchanges: list[Exchange]  # exchanges whose phases 1-4 are new
    calls: int = 0
    cost: float = 0.0
    widest_after: float = float("inf")  # the measured widest scaled by `ratio` (the prediction when unmeasured)
    ratio: float = 1.0  # predicted widest after / before, from the variance components
    predicted_after: float = float("inf")

    def describe(self) -> WaveOption:
        return {"kind": self.kind, "units": self.units, "calls": self.calls, "cost_usd": self.cost,
                "predicted_widest_after": _finite(self.widest_after)}


@dataclass(frozen=True)
class _Assess:
    """What every candidate of one look is predicted against."""

    before_now: float  # the current design's predicted widest at this look's error rate
    before_next: float  # ... at the next look's
    current: float  # the measured widest (inf: not measurable)
    alpha: float  # the next look's error rate
    components: Mapping[str, float]


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


class AdaptiveRunner:
    """Runs a tournament's first pass, then waves until the target (see the module docstring). The same
    interface as TournamentRunner: `async for ev in runner.run()`, `cancel()`, `budget`, `resume_hint()`;
    between waves it also yields AdaptiveMessage."""

    def __init__(self, plan: TournamentPlan, clients: Mapping[str, ModelClient], store: ResultsStore, *,
                 target: float, budget_usd: float | None = None, looks: LookPlan | None = None,
                 **runner_kw: Unpack[PaceOptions]) -> None:
        self.plan = plan
        self.clients = clients
        self.store = store
        self.target = target
        self.budget_usd = budget_usd if budget_usd is not None else plan.config.budget_usd
        self.runner_kw = runner_kw
        self.tournament_id = plan.tournament_id
        self.state = load_state(store, self.tournament_id) or AdaptiveState(target)
        self.state.target = target
        self.state.stop_reason = None
        self.state.stop_message = ""
        from ebtui.core.analysis.sequential import LookPlan, look_plan_of

        #: the alpha spending is fixed by the first look: a resumed run keeps the one it started with
        self.looks = look_plan_of(self.state.rule) if self.state.rule else (looks or LookPlan())
        self.state.rule = self.looks.json()
        self._cancelled = False
        self._inner: TournamentRunner | None = None
        self.tournament: Tournament | None = None
        self.schedule = extended(plan.schedule, self.state.waves)
        self._families = configured_families(plan.infos)

    # -- the TournamentRunner interface -------------------------------------------------------------------
    @property
    def budget(self) -> Budget:
        return self._inner.budget if self._inner is not None else Budget(self.budget_usd)

    def cancel(self) -> None:
        self._cancelled = True
        if self._inner is not None:
            self._inner.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def resume_hint(self, config_path: str | None = None, budget: float | None = None) -> str:
        base = self._inner.resume_hint(config_path, budget) if self._inner is not None else \
            f"ebtui tournament {config_path or 'CONFIG'} --resume {self.tournament_id}"
        return f"{base} --until-half-width {num.shown(self.target, 'g')}"

    def progress(self) -> Progress | None:
        return self._inner.progress() if self._inner is not None else None

    async def run(self) -> AsyncIterator[TournamentEvent | AdaptiveMessage]:
        from ebtui.core.tournament.runner import TournamentRunner

        last: TournamentFinished | None = None
        while True:
            self._inner = TournamentRunner(
                self.plan.config, self.clients, self.store, dilemmas=self.plan.dilemmas, schedule=self.schedule,
                models_config=self.plan.models_config, tournament_id=self.tournament_id,
                budget_usd=self.budget_usd, **self.runner_kw)
            async for ev in self._inner.run():
                if isinstance(ev, TournamentFinished):
                    last = ev
                    continue
                yield ev
            assert last is not None
            self.tournament = last.tournament
            if self._cancelled:
                self._stop(STOP_CANCELLED, "cancelled; run it again to resume")
            elif last.tournament.status == TournamentStatus.STOPPED_BUDGET:
                closing = self._closing_look()
                if closing is not None:
                    yield closing
                self._stop(STOP_BUDGET, f"budget reached (${num.shown(self._inner.budget.limit_usd, '.2f')}) before the "
                                        "target; resume with a larger --budget" + self._closing_note())
            elif last.tournament.status != TournamentStatus.COMPLETE:
                self._stop(STOP_INCOMPLETE, "some rounds did not complete: the target is not measured on a "
                                            "partial pass; run it again to retry them")
            else:
                yield self._next_wave()
            if self.state.stop_reason is not None:
                break
            save_state(self.store, self.tournament_id, self.state)  # before any of the wave's rounds start
            w = self.state.waves[-1]
            yield AdaptiveMessage(
                f"wave {w.number}: {w.kind} +{w.units} ({w.calls} calls, ${num.shown(w.cost_usd, '.4f')}) — widest anytime-valid "
                f"half-width {_fmt(w.widest_before)}, predicted {num.shown(w.predicted_widest_after, '.3f')} after it "
                f"(target {num.shown(self.target, 'g')})", w.widest_before, self.target)
        save_state(self.store, self.tournament_id, self.state)
        t = last.tournament
        t.note = (f"{t.note}; " if t.note else "") + f"adaptive: {self.state.stop_message}"
        # Tournament allows extra fields: the waves, with the tournament (no attribute mypy knows of)
        setattr(t, "adaptive", self.state.json())  # noqa: B010
        self.store.save_tournament(t)
        yield AdaptiveMessage(f"stopped: {self.state.stop_message}",
                              self.state.measurements[-1]["widest"] if self.state.measurements else None,
                              self.target, self.state.stop_reason)
        yield TournamentFinished(t, last.progress, last.summary)

    def _closing_look(self) -> AdaptiveMessage | None:
        """A look at the rounds a budget stop left (while planned looks remain), so the report's intervals are
        valid for them too."""
        if len(self.state.measurements) >= self.looks.max_looks:
            return None
        done = [r for r in self._rounds() if r.status == RoundStatus.COMPLETE]
        return self.after_pass(done, closing=True) if done else None

    def _closing_note(self) -> str:
        m = self.state.measurements[-1] if self.state.measurements else None
        if m is None:
            return ""
        return f"; widest anytime-valid half-width {_fmt(m.get('widest'))} at look {m.get('look', '?')}"

    # -- deciding -----------------------------------------------------------------------------------------
    def _stop(self, reason: str, message: str) -> None:
        self.state.stop_reason = reason
        self.state.stop_message = message

    def _rounds(self) -> list[Round]:
        ids = {sr.round_id(self.tournament_id) for sr in self.schedule.rounds}
        return [r for r in self.store.load_rounds(tournament=self.tournament_id) if r.id in ids]

    def _next_wave(self) -> AdaptiveMessage:
        return self.after_pass([r for r in self._rounds() if r.status == RoundStatus.COMPLETE])

    def after_pass(self, rounds: Sequence[Round], *, closing: bool = False) -> AdaptiveMessage:
        """One look at a complete pass's rounds: measure the anytime-valid intervals, then stop (saying why) or
        append the next wave to the state and extend the schedule. `closing`: the run stops anyway (e.g. the
        runner's budget stop); the look only gives the final rounds their valid intervals."""
        from ebtui.core.analysis.fit import fit
        from ebtui.core.analysis.intervals import judge_sample
        from ebtui.core.analysis.pairwise import Data
        from ebtui.core.analysis.sequential import measure_look
        from ebtui.core.analysis.variance import variance_components
        from ebtui.core.families import family_function

        family_of = family_function(self._families or None)
        look_no = len(self.state.measurements) + 1
        if look_no > self.looks.max_looks:  # a finished run started again: no error rate left to spend
            last = self.state.measurements[-1]
            self._stop(STOP_MAX_LOOKS, f"all {self.looks.max_looks} planned looks were taken; widest anytime-valid "
                                       f"half-width {_fmt(last.get('widest'))} at look {self.looks.max_looks} (its "
                                       "intervals stand; a new look would spend error rate there is none of)")
            return AdaptiveMessage(self.state.stop_message, last.get("widest"), self.target, STOP_MAX_LOOKS)
        jf = fit(list(rounds), family_of) if rounds else None
        calls_so_far = self._calls(self.schedule.exchanges)
        spent = sum(round_cost(r) for r in rounds)
        look = None
        if jf is not None and len(jf.design.models) >= 2:
            look = measure_look(Data.of(jf.design.frame), self.looks, look_no,
                                judges=judge_sample(jf.design.frame))  # as the report's pairwise table
            self.state.intervals = look.json()
        widest = look.widest if look is not None else None
        components = variance_components(list(rounds), family_of, replicates=0).values()
        measured: Measurement = {
            "wave": len(self.state.waves), "widest": widest, "calls": calls_so_far, "spent_usd": spent,
            "dilemmas": len(self.schedule.dilemma_ids), "look": look_no, "alpha": self.looks.alpha_at(look_no),
            "widest_fixed": look.widest_fixed if look is not None else None, "uniform_calls": None}
        self.state.measurements.append(measured)

        def uniform_calls() -> int | None:
            """The uniform design for the target from this look's estimates (the plan's search: slow for a far
            target, so only worked out when a wave is planned or the target is met)."""
            self.state.uniform = self._uniform(components)
            measured["uniform_calls"] = self.state.uniform["calls"] if self.state.uniform is not None else None
            return measured["uniform_calls"]

        msg = AdaptiveMessage(f"look {look_no} of {self.looks.max_looks}: widest anytime-valid pairwise half-width "
                              f"{_fmt(widest)} after {calls_so_far} calls (target {num.shown(self.target, 'g')})", widest,
                              self.target)
        if closing:
            return msg
        if widest is not None and widest <= self.target:
            uniform_calls()
            self._stop(STOP_TARGET, self._target_message(widest, calls_so_far))
            return msg
        if look_no >= self.looks.max_looks:
            self._stop(STOP_MAX_LOOKS, f"the last planned look ({look_no} of {self.looks.max_looks}) did not reach "
                                       f"the target: widest anytime-valid half-width {_fmt(widest)} > "
                                       f"{num.shown(self.target, 'g')} after {calls_so_far} calls{self._cap_note(look_no)}")
            return msg
        cands = self._candidates()
        if not cands:
            self._stop(STOP_NOTHING, "nothing left can narrow it: no unplayed dilemma, no free judge, and "
                                     f"{MAX_REPEATS} repeats already; widest half-width {_fmt(widest)}")
            return msg
        current = widest if widest is not None and math.isfinite(widest) else float("inf")
        a_now, a_next = self.looks.alpha_at(look_no), self.looks.alpha_at(look_no + 1)
        before_now = self._predicted_widest(self.schedule, components, a_now)
        before_next = self._predicted_widest(self.schedule, components, a_next)
        ctx = _Assess(before_now, before_next, current, a_next, components)
        for c in cands:
            self._assess(c, ctx)
        useful = [c for c in cands if not math.isfinite(current) and c.kind in NEW_DILEMMAS
                  or math.isfinite(current) and 1.0 - c.ratio >= MIN_NARROWING]
        if not useful:
            self._stop(STOP_NOTHING, "nothing left can narrow it: "
                       + "; ".join(f"{c.kind} would give {_fmt(c.widest_after)}" for c in cands)
                       + f" (widest now {_fmt(widest)}; each narrows it by under {num.shown(MIN_NARROWING, '.0%')}"
                       + ("; the model x dilemma variation needs more dilemmas than the document has)"
                          if not any(c.kind in NEW_DILEMMAS for c in cands) else ")"))
            return msg
        cap = uniform_calls()
        if cap is not None and calls_so_far >= cap:
            self._stop(STOP_UNIFORM, f"{calls_so_far} calls played, as many as the {self._design()} or more: an "
                                     f"adaptive run spends no more; widest anytime-valid half-width {_fmt(widest)}")
            return msg
        remaining = None if self.budget_usd is None else self.budget_usd - spent
        room = None if cap is None else cap - calls_so_far
        sized = [self._size_dilemmas(c, ctx, remaining, room) if c.kind in NEW_DILEMMAS else c for c in useful]
        in_budget = [c for c in sized if remaining is None or c.cost <= remaining]
        affordable = [c for c in in_budget if room is None or c.calls <= room]
        if not affordable:
            if not in_budget:
                cheapest = min(sized, key=lambda c: c.cost)
                self._stop(STOP_BUDGET, f"budget reached: the cheapest useful wave ({cheapest.kind}) would cost "
                                        f"${num.shown(cheapest.cost, '.4f')}, ${num.shown(remaining or 0, '.4f')} is left; widest half-width "
                                        f"{_fmt(widest)}")
            else:
                smallest = min(in_budget, key=lambda c: c.calls)
                self._stop(STOP_UNIFORM, f"the next useful wave ({smallest.kind} +{smallest.units}, {smallest.calls} "
                                         f"calls) would pass the {self._design()} after {calls_so_far} calls: an "
                                         f"adaptive run spends no more; widest anytime-valid half-width "
                                         f"{_fmt(widest)}")
            return msg
        reach = [c for c in affordable if c.widest_after <= self.target]
        chosen = (min(reach, key=lambda c: (c.cost, c.calls)) if reach
                  else min(affordable, key=lambda c: (c.widest_after, c.cost, c.calls)))
        self.state.waves.append(Wave(len(self.state.waves) + 1, chosen.kind, chosen.units,
                                     [ex_json(ex) for ex in chosen.exchanges], chosen.calls, chosen.cost,
                                     _finite(widest or float("inf")), chosen.widest_after,
                                     [c.describe() for c in sized]))
        self.schedule = extended(self.plan.schedule, self.state.waves)
        return msg

    def _design(self) -> str:
        u = self.state.uniform
        if u is None:
            return "uniform design"
        return (f"{u['calls']} calls of the uniform design the plan picks for this target ({u['dilemmas']} dilemmas, "
                f"{u['judge_mode']}, {u['repeats']} repeat(s))")

    def _cap_note(self, look_no: int) -> str:
        return "" if self.state.uniform is None else f" (the {self._design()}, as estimated at look {look_no - 1})"

    def _target_message(self, widest: float, calls: int) -> str:
        u = self.state.uniform
        out = (f"target reached: widest anytime-valid pairwise half-width {num.shown(widest, '.3f')} <= {num.shown(self.target, 'g')} after "
               f"{calls} calls")
        if u is None:
            return out + "; no uniform design of up to 400 dilemmas is predicted to reach it (for comparison)"
        if calls < u["calls"]:
            return out + f", fewer than the {self._design()}"
        if calls == u["calls"]:
            return out + f", as many as the {self._design()}"
        first = self._calls(self.plan.schedule.exchanges)
        return out + (f"; NOT fewer than the {self._design()}: the first pass alone was that large"
                      if calls == first else f"; more than the {self._design()} as estimated at this look: the "
                      "estimates moved after the last wave was planned")

    def _uniform(self, components: Mapping[str, float]) -> DesignJson | None:
        """The uniform design `ebtui plan --half-width W` would choose, from the same estimates."""
        from ebtui.core.tournament.planner import uniform_for_target

        cfg = self.plan.config
        judges = list(cfg.judges) if isinstance(cfg.judges, list) else None
        pool = judges or list(cfg.models)
        playing = len([j for j in pool if j in cfg.models])
        modes = ("rotate", "panel") if len(pool) - playing + max(0, playing - 2) >= 2 else ("rotate",)
        best = uniform_for_target(cfg.models, components, self.target, modes=modes, judges=judges,
                                  self_debates=cfg.self_debates, seed=cfg.seed,
                                  document_dilemmas=len(self.plan.dilemmas))
        return None if best is None else best.json()

    @staticmethod
    def _calls(exchanges: Sequence[Exchange]) -> int:
        return sum(4 + len(ex.judges) for ex in exchanges)

    def _pool(self) -> list[str]:
        cfg = self.plan.config
        return list(cfg.judges) if isinstance(cfg.judges, list) else list(cfg.models)

    def _candidates(self) -> list[_Candidate]:
        cfg = self.plan.config
        out: list[_Candidate] = []
        played = list(self.schedule.dilemma_ids)
        doc = [d.id for d in self.plan.dilemmas]
        unplayed = [d for d in doc if d not in played]
        wave_no = len(self.state.waves) + 1
        if unplayed:
            for kind in NEW_DILEMMAS:
                new = self._new_dilemmas(unplayed[:1], wave_no, half=kind == "half_dilemmas")
                if kind == "half_dilemmas" and len(new) == len(self._new_dilemmas(unplayed[:1], wave_no)):
                    continue  # nothing to halve (two models, or self-debates only)
                out.append(_Candidate(kind, 1, new, [(ex, j) for ex in new for j in ex.judges], new))
        load = Counter(j for ex in self.schedule.exchanges for j in ex.judges)
        more: list[Exchange] = []
        added: list[tuple[Exchange, str]] = []
        for ex in self.schedule.exchanges:
            free = [j for j in self._pool() if j not in (ex.team_a, ex.team_b) and j not in ex.judges]
            if free:
                j = min(free, key=lambda x: (load[x], x))
                load[j] += 1
                nx = Exchange(ex.dilemma_id, ex.team_a, ex.team_b, ex.repeat, (*ex.judges, j))
                more.append(nx)
                added.append((nx, j))
        if more:
            out.append(_Candidate("judges", 1, more, added, []))
        reps = 1 + max((ex.repeat for ex in self.schedule.exchanges), default=0)
        if reps < MAX_REPEATS:
            sched = build_schedule(cfg.models, played, judges=cfg.judges, self_debates=cfg.self_debates,
                                   rounds_per_pairing=1, seed=cfg.seed + 1000 * wave_no)
            new = [Exchange(ex.dilemma_id, ex.team_a, ex.team_b, reps, ex.judges) for ex in sched.exchanges]
            out.append(_Candidate("repeats", 1, new, [(ex, j) for ex in new for j in ex.judges], new))
        return out

    def _new_dilemmas(self, ids: list[str], wave_no: int, *, half: bool = False) -> list[Exchange]:
        """Every pairing on the new dilemmas, as configured; `half`: each pair meets once per dilemma, in one
        ordering (alternating from dilemma to dilemma, so each model presents as often as it responds)."""
        cfg = self.plan.config
        exchanges = build_schedule(cfg.models, ids, judges=cfg.judges, self_debates=cfg.self_debates,
                                   rounds_per_pairing=cfg.rounds_per_pairing, seed=cfg.seed + 1000 * wave_no).exchanges
        if not half:
            return exchanges
        doc = [d.id for d in self.plan.dilemmas]
        order = sorted(cfg.models)
        kept = []
        for ex in exchanges:
            if ex.team_a == ex.team_b:
                kept.append(ex)
                continue
            lo, hi = sorted((ex.team_a, ex.team_b))
            k = doc.index(ex.dilemma_id) if ex.dilemma_id in doc else 0
            flip = (k + order.index(lo) + order.index(hi)) % 2 == 1
            if (ex.team_a, ex.team_b) == ((hi, lo) if flip else (lo, hi)):
                kept.append(ex)
        return kept

    def _size_dilemmas(self, c: _Candidate, ctx: _Assess, remaining: float | None, room: int | None) -> _Candidate:
        """As few new dilemmas as predicted to reach the target, else as many as the budget and the uniform
        design's size allow (looks are few: a wave is sized to finish, not to re-measure soon). While sizing,
        the cost is scaled from the one-dilemma wave's per call; the size chosen is priced in full."""
        played = list(self.schedule.dilemma_ids)
        unplayed = [d.id for d in self.plan.dilemmas if d.id not in played]
        per_call = c.cost / c.calls if c.calls else 0.0
        best = c
        for n in range(2, len(unplayed) + 1):
            if best.widest_after <= self.target:
                break
            new = self._new_dilemmas(unplayed[:n], len(self.state.waves) + 1, half=c.kind == "half_dilemmas")
            nc = _Candidate(c.kind, n, new, [(ex, j) for ex in new for j in ex.judges], new)
            self._assess(nc, ctx, price=False)
            if remaining is not None and nc.calls * per_call > remaining or room is not None and nc.calls > room:
                break
            best = nc
        if best is not c:
            best.calls, best.cost = self._price(best)
        return best

    def _assess(self, c: _Candidate, ctx: _Assess, *, price: bool = True) -> None:
        after = self._predicted_widest(extended(self.schedule, [Wave(
            0, c.kind, c.units, [ex_json(e) for e in c.exchanges], 0, 0.0, None, 0.0)]), ctx.components, ctx.alpha)
        c.predicted_after = after
        c.ratio = after / ctx.before_next if math.isfinite(ctx.before_next) and ctx.before_next > 0 else 0.0
        # the measured widest, scaled by the predicted change (design and the next look's error rate)
        c.widest_after = (ctx.current * after / ctx.before_now if math.isfinite(ctx.current)
                          and math.isfinite(ctx.before_now) and ctx.before_now > 0 else after)
        if price:
            c.calls, c.cost = self._price(c)
        else:
            c.calls = 4 * len({ex.exchange_key for ex in c.new_exchanges}) + len(c.new_judgments)

    @staticmethod
    def _predicted_widest(schedule: Schedule, components: Mapping[str, float], alpha: float) -> float:
        """The widest expected anytime-valid pairwise half-width of a design at a look's error rate, from the
        variance components estimated on the rounds so far (ebtui.core.analysis.precision.predict_pairs: the
        expected bootstrap SE; the t quantile of the look, Bonferroni over the pairs)."""
        from ebtui.core.analysis.precision import predict_pairs, rows_of_exchanges
        from ebtui.core.analysis.sequential import look_quantile

        if alpha <= 0:
            return float("inf")
        preds = predict_pairs(rows_of_exchanges(schedule.exchanges), components)
        G = len(schedule.dilemma_ids)
        if not preds or G < 2:
            return float("inf")
        q = look_quantile(G - 1, alpha, len(preds))
        return float(np.max([p.se for p in preds])) * q

    def _price(self, c: _Candidate) -> tuple[int, float]:
        """Calls and list cost of the candidate's new calls (phases 1-4 of new exchanges, the new judgments)."""
        from ebtui.core.tournament.plan import estimate_tournament

        cfg, plan = self.plan.config, self.plan
        new_keys = {ex.exchange_key for ex in c.new_exchanges}
        team = Schedule([Exchange(ex.dilemma_id, ex.team_a, ex.team_b, ex.repeat, ()) for ex in c.new_exchanges],
                        list(cfg.models), [], "rotate")
        judged = Schedule([Exchange(ex.dilemma_id, ex.team_a, ex.team_b, ex.repeat, (j,))
                           for ex, j in c.new_judgments], list(cfg.models), [], "rotate")
        judged_teams = Schedule([Exchange(ex.dilemma_id, ex.team_a, ex.team_b, ex.repeat, ())
                                 for ex, _j in c.new_judgments], list(cfg.models), [], "rotate")
        est_team = estimate_tournament(cfg, team, plan.dilemmas, plan.infos, tournament_id=self.tournament_id)
        est_j = estimate_tournament(cfg, judged, plan.dilemmas, plan.infos, tournament_id=self.tournament_id)
        est_jt = estimate_tournament(cfg, judged_teams, plan.dilemmas, plan.infos, tournament_id=self.tournament_id)
        cost = est_team.total_cost_usd + est_j.total_cost_usd - est_jt.total_cost_usd
        calls = 4 * len(new_keys) + len(c.new_judgments)
        return calls, max(cost, 0.0)


def _fmt(x: float | None) -> str:
    return "not measurable yet (fewer than 3 dilemmas)" if x is None or not math.isfinite(x) else f"{num.shown(x, '.3f')}"


def runner_for(plan: TournamentPlan, clients: Mapping[str, ModelClient], store: ResultsStore,
               **kw: Unpack[RunOptions]) -> TournamentRunner | AdaptiveRunner:
    """The runner a tournament plan asks for: waves until the target half-width when the tournament has one
    (`target_half_width`), else the plain runner (`plan.runner`). Both have the same interface."""
    if plan.config.target_half_width is not None:
        return AdaptiveRunner(plan, clients, store, target=plan.config.target_half_width, **kw)
    return plan.runner(clients, store, **kw)
