"""An adaptive tournament's record: its waves, its looks (measurements) and why it stopped, as saved in
`<store>/tournaments/waves/<id>.json` before each wave's rounds start (so a killed run resumes the same
extended schedule), and the schedule extended by the waves. The runner: ebtui.core.tournament.adaptive.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from ebtui.core.tournament.schedule import Exchange, Schedule

if TYPE_CHECKING:
    from ebtui.core.analysis.sequential import LookJson
    from ebtui.core.store import ResultsStore
    from ebtui.core.tournament.planner import DesignJson

__all__ = ["AdaptiveMessage", "AdaptiveState", "Measurement", "Wave", "WaveExchange", "WaveOption", "ex_json",
           "extended", "load_state", "save_state", "waves_path"]


@dataclass(frozen=True)
class AdaptiveMessage:
    """A line for the front ends: a wave planned, a measurement, why the run stopped."""

    message: str
    widest_half_width: float | None = None
    target: float | None = None
    stop_reason: str | None = None


class WaveExchange(TypedDict):
    """An exchange of a wave, as the waves file holds it."""

    dilemma_id: str
    team_a: str
    team_b: str
    repeat: int
    judges: list[str]  # the exchange's full judge list


class WaveOption(TypedDict):
    """A wave that was considered, with what it was predicted to give."""

    kind: str
    units: int
    calls: int
    cost_usd: float
    predicted_widest_after: float | None


class Measurement(TypedDict, total=False):
    """The rounds measured after a pass (a look)."""

    wave: int
    widest: float | None  # the widest anytime-valid pairwise half-width (None: not measurable)
    calls: int
    spent_usd: float
    dilemmas: int
    look: int  # 1-based: the look's place in the alpha spending
    alpha: float  # the error rate this look spent
    widest_fixed: float | None  # the fixed-sample half-width the report's pairwise table prints, for comparison
    uniform_calls: int | None  # the calls of the uniform design the plan picks for the target, from this look


@dataclass
class Wave:
    number: int
    kind: str  # dilemmas | judges | repeats
    units: int
    exchanges: list[WaveExchange]
    calls: int
    cost_usd: float
    widest_before: float | None
    predicted_widest_after: float
    alternatives: list[WaveOption] = field(default_factory=list)


@dataclass
class AdaptiveState:
    target: float
    waves: list[Wave] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)  # after each pass
    stop_reason: str | None = None
    stop_message: str = ""
    uniform: DesignJson | None = None  # the uniform design the plan would choose for the target
    rule: dict[str, object] = field(default_factory=dict)  # the alpha spending (LookPlan.json())
    intervals: LookJson | None = None  # the last look's anytime-valid pairwise intervals

    def json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AdaptiveState:
        """From the waves file as json.loads read it (unchecked: a bad file raises, and load_state gives None)."""
        waves = [Wave(**w) for w in data.get("waves", [])]
        return cls(float(data["target"]), waves, list(data.get("measurements", [])), data.get("stop_reason"),
                   str(data.get("stop_message", "")), data.get("uniform"), dict(data.get("rule") or {}),
                   data.get("intervals"))


def waves_path(store: ResultsStore, tournament_id: str) -> Path:
    return store.root / "tournaments" / "waves" / f"{tournament_id}.json"


def load_state(store: ResultsStore, tournament_id: str) -> AdaptiveState | None:
    p = waves_path(store, tournament_id)
    if not p.exists():
        return None
    try:
        return AdaptiveState.from_json(json.loads(p.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_state(store: ResultsStore, tournament_id: str, state: AdaptiveState) -> None:
    from ebtui.core.store.files import atomic_write

    p = waves_path(store, tournament_id)
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(p, json.dumps(state.json(), indent=2, allow_nan=False).encode("utf-8"),
                 durable=getattr(store, "durable", True))


def ex_json(ex: Exchange) -> WaveExchange:
    return {"dilemma_id": ex.dilemma_id, "team_a": ex.team_a, "team_b": ex.team_b, "repeat": ex.repeat,
            "judges": list(ex.judges)}


def extended(base: Schedule, waves: Sequence[Wave]) -> Schedule:
    """The base schedule with every wave's exchanges: a wave exchange with a known key replaces its judges
    (the earlier judges stay first, so the primary round is the same), a new key is appended."""
    order: list[str] = []
    by_key: dict[str, Exchange] = {}
    for ex in base.exchanges:
        order.append(ex.exchange_key)
        by_key[ex.exchange_key] = ex
    for w in waves:
        for e in w.exchanges:
            ex = Exchange(e["dilemma_id"], e["team_a"], e["team_b"], int(e["repeat"]), tuple(e["judges"]))
            if ex.exchange_key not in by_key:
                order.append(ex.exchange_key)
            by_key[ex.exchange_key] = ex
    exchanges = [by_key[k] for k in order]
    ids = list(dict.fromkeys(ex.dilemma_id for ex in exchanges))
    return Schedule(exchanges, list(base.models), ids, base.judge_mode, list(base.notes))
