"""Adaptive tournaments emulated on planted truth: the real AdaptiveRunner decides (measures its anytime-valid
intervals, adds waves, stops), and each pass's rounds are generated from planted variance components
(tests/support/sim_vc.py) instead of being played — so many runs fit in a test and the coverage of the
intervals at the stop can be counted against the planted skill gaps."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ebtui.config import load_models_config
from ebtui.core.analysis.sequential import LookPlan
from ebtui.core.records import Dilemma, Round
from ebtui.core.tournament import plan_tournament
from ebtui.core.tournament.adaptive import AdaptiveRunner
from ebtui.core.tournament.config import parse_tournament_config
from ebtui.core.tournament.schedule import build_schedule
from tests.support.factories import open_store
from tests.support.sim_vc import Draw, Planted


@dataclass
class Outcome:
    """One emulated run at its stop."""

    stop_reason: str
    looks: int
    calls: int
    uniform_calls: int | None  # the last the run worked out (at the stop, or where its last wave was planned)
    widest: float | None
    hits: list[bool] = field(default_factory=list)  # per pair with an interval: did it hold the planted gap
    fixed_hits: list[bool] = field(default_factory=list)  # the same with the report's fixed-sample interval
    blank: int = 0
    runner: AdaptiveRunner | None = None  # the runner, at its stop
    rounds: list[Round] = field(default_factory=list)  # every round it was given

    @property
    def all_covered(self) -> bool:
        return all(self.hits)

    @property
    def all_fixed_covered(self) -> bool:
        return all(self.fixed_hits)


def _plan(tmp: Path, models: Sequence[str], dilemmas: int, first: int, judges: str | list[str]) -> object:
    toml = tmp / "models.toml"
    everyone = [*models, *(j for j in judges if j not in models)] if isinstance(judges, list) else list(models)
    toml.write_text("".join(f'[models.{m}]\nprovider = "scripted"\nprice_in = 1.0\nprice_out = 4.0\n'
                            for m in everyone), encoding="utf-8")
    config = parse_tournament_config({"models": list(models), "judges": judges}, tmp / "t.toml")
    plan = plan_tournament(config, load_models_config(toml))
    ids = [f"d{i + 1:02d}" for i in range(dilemmas)]
    docs = [Dilemma(id=d, title=d, category="synthetic", core_scenario=f"Scenario {d}: a hard choice.",
                    questions=["What should be done?"]) for d in ids]
    schedule = build_schedule(list(models), ids[:first], judges=judges, seed=config.seed)
    return dataclasses.replace(plan, dilemmas=docs, schedule=schedule)


def emulate(p: Planted, tmp: Path, *, seed: int, target: float, first: int = 4, dilemmas: int = 40,
            judges: str | list[str] = "rotate", looks: LookPlan | None = None) -> Outcome:
    """One adaptive run on a fresh realisation of `p` (seed), from a first pass of `first` dilemmas."""
    models = sorted(p.skill)
    plan = _plan(tmp, models, dilemmas, first, judges)
    runner = AdaptiveRunner(plan, {}, open_store(tmp / f"store-{seed}"), target=target, looks=looks)  # type: ignore[arg-type]
    draw = Draw(p, seed)
    rounds: list[Round] = []
    played: set[tuple[str, str]] = set()
    while True:
        for ex in runner.schedule.exchanges:
            for j in ex.judges:
                if (ex.exchange_key, j) not in played:
                    played.add((ex.exchange_key, j))
                    rounds.append(draw.round_for(ex, j))
        runner.after_pass(rounds)
        if runner.state.stop_reason is not None:
            break
    st = runner.state
    last = st.measurements[-1]
    caps = [m.get("uniform_calls") for m in st.measurements if m.get("uniform_calls") is not None]
    out = Outcome(st.stop_reason or "", len(st.measurements), int(last["calls"]), caps[-1] if caps else None,
                  last.get("widest"), runner=runner, rounds=rounds)
    assert st.intervals is not None
    for pr in st.intervals["pairs"]:
        truth = p.skill[pr["a"]] - p.skill[pr["b"]]
        if pr["ci_low"] is None or pr["ci_high"] is None or pr["diff"] is None:
            out.blank += 1
            continue
        out.hits.append(pr["ci_low"] <= truth <= pr["ci_high"])
        if pr["fixed_half_width"] is not None:
            out.fixed_hits.append(abs(pr["diff"] - truth) <= pr["fixed_half_width"])
    return out
