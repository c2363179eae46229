"""Rounds as an Inspect AI evaluation log (`.eval`), built from inspect_ai's own log classes and written with
its `write_eval_log`, so `inspect view` opens it: one sample per exchange, the phases as messages, one score
per judgment and team, token usage and cost; model text is marked untrusted for the viewer.
inspect_ai is an optional extra (`MissingExtra` says what to install). The mapping: docs/EXPORTS.md.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ebtui import __version__
from ebtui.core.analysis.common import exchanges
from ebtui.core.export import MissingExtra
from ebtui.core.export.tidy import round_judgments
from ebtui.core.facts import team_models
from ebtui.core.records import (
    CRITERIA,
    PHASE_ORDER,
    PHASE_SPEAKER,
    Judgment,
    Phase,
    PhaseStatus,
    PhaseType,
    Round,
    RoundStatus,
    Tournament,
)
from ebtui.core.safe_text import strip_control
from ebtui.core.views.scores import score_grid
from ebtui.providers.base import Usage

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ChatMessage, ModelUsage
    from inspect_ai.scorer import Score

ROLE_NAMES = {"a": "team_a", "b": "team_b", "judge": "judge"}


def require_inspect() -> ModuleType:
    try:
        import inspect_ai.log as log
    except ImportError:
        raise MissingExtra("inspect_ai", "inspect", "an Inspect AI log") from None
    return log


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def _model_usage(usage: Usage) -> ModelUsage:
    from inspect_ai.model import ModelUsage

    return ModelUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                      total_tokens=usage.input_tokens + usage.output_tokens,
                      input_tokens_cache_read=usage.cached_tokens or None,
                      input_tokens_cache_write=usage.cache_write_tokens or None, total_cost=usage.cost_usd)


def _phase_meta(r: Round, p: Phase) -> dict[str, object]:
    return {"round_id": r.id, "phase": str(p.phase_type), "speaker": PHASE_SPEAKER[p.phase_type],
            "model": p.model_id, "status": str(p.status), "error_kind": p.error_kind,
            "error": strip_control(p.error) if p.error else None, "attempts": p.attempts,
            "finish_reason": p.finish_reason, "input_tokens": p.usage.input_tokens,
            "output_tokens": p.usage.output_tokens, "cost_usd": p.usage.cost_usd, "latency_s": p.latency,
            "reused_from": p.reused_from}


def _phase_messages(r: Round, p: Phase) -> list[ChatMessage]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

    meta = _phase_meta(r, p)
    out: list[ChatMessage] = []
    if p.prompt:
        out.append(ChatMessageUser(id=f"{r.id}:{p.phase_type}:prompt", content=strip_control(p.prompt),
                                   source="input",
                                   metadata={**meta, "system_prompt": strip_control(p.system_prompt)}))
    if p.status == PhaseStatus.COMPLETE and p.response:
        out.append(ChatMessageAssistant(id=f"{r.id}:{p.phase_type}:response", content=strip_control(p.response),
                                        model=p.model_id, source="generate", metadata=meta))
    elif not p.prompt:  # nothing was sent (e.g. no consistency case): a note of why, as metadata only
        out.append(ChatMessageUser(id=f"{r.id}:{p.phase_type}:skipped", content=f"[{p.phase_type}: {p.status}]",
                                   source="input", metadata=meta))
    return out


def score_name(team: str, judge: str, index: int, taken: set[str]) -> str:
    name = f"team_{team}/{judge}" + (f"#{index}" if index else "")
    base, n = name, 2
    while name in taken:  # the same judge twice in one exchange
        name = f"{base}~{n}"
        n += 1
    taken.add(name)
    return name


def _scores(r: Round, j: Judgment, index: int, taken: set[str]) -> dict[str, Score]:
    from inspect_ai.scorer import Score

    grid = score_grid(j)
    judge = j.judge_model or r.judge_model
    out: dict[str, Score] = {}
    for team in ("a", "b"):
        cells = [grid.cell(team, c) for c in CRITERIA]
        just = j.team_a_justification if team == "a" else j.team_b_justification
        meta = {
            "round_id": r.id, "judgment_index": index, "judge": judge, "team": team,
            "model": team_models(r)[team],
            "parsed": {c.criterion: c.parsed for c in cells},
            "effective": {c.criterion: c.value for c in cells},
            "overrides": {c.criterion: {"parsed": c.override.parsed_value, "value": c.override.value,
                                        "note": strip_control(c.override.note), "time": _iso(c.override.time)}
                          for c in cells if c.override is not None},
            "accepted": [c.criterion for c in cells if c.action == "accept"],
            "review": {c.criterion: {"state": c.review, "reasons": [strip_control(m) for m in c.reasons]}
                       for c in cells if c.review},
            "needs_review": grid.needs_review,
            "provenance": {c.criterion: {"kind": c.kind, "text": strip_control(c.source)} for c in cells},
            "total_parsed": grid.parsed_totals[team], "total_effective": grid.totals[team],
            "parse_method": j.parse_method,
        }
        out[score_name(team, judge, index, taken)] = Score(
            value={c.criterion: c.value for c in cells}, explanation=strip_control(just) or None, metadata=meta)
    return out


def _usage_by(rounds: Sequence[Round]) -> tuple[dict[str, Usage], dict[str, Usage]]:
    """(model -> usage, role -> usage) of the phases the rounds ran themselves (shared copies counted once)."""
    by_model: dict[str, Usage] = defaultdict(Usage)
    by_role: dict[str, Usage] = defaultdict(Usage)
    for r in rounds:
        for p in r.phases:
            if p.reused_from:
                continue
            by_model[p.model_id] = by_model[p.model_id] + p.usage
            role = ROLE_NAMES[PHASE_SPEAKER[p.phase_type]]
            by_role[role] = by_role[role] + p.usage
    return dict(by_model), dict(by_role)


def _sample(ex_id: str, rounds: list[Round]) -> EvalSample:
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageAssistant, ModelOutput

    rounds = sorted(rounds, key=lambda r: (r.timestamp, r.id))
    order = {pt: i for i, pt in enumerate(PHASE_ORDER)}
    messages: list[ChatMessage] = []
    # phases 1-4: from the round that ran each one itself (a panel's other rounds hold copies)
    for pt in PHASE_ORDER[:-1]:
        found = [(r, p) for r in rounds if (p := r.phase(pt)) is not None]
        if found:
            r, p = min(found, key=lambda rp: (bool(rp[1].reused_from), order[pt]))
            messages += _phase_messages(r, p)
    scores: dict[str, Score] = {}
    taken: set[str] = set()
    last_judge: tuple[str, str] | None = None
    for r in rounds:
        jp = r.phase(PhaseType.JUDGMENT)
        if jp is not None:
            messages += _phase_messages(r, jp)
            if jp.response:
                last_judge = (jp.model_id, strip_control(jp.response))
        for index, j in enumerate(round_judgments(r)):
            scores.update(_scores(r, j, index, taken))
            if index and j.raw_response:  # a judgment added afterwards: its reply (its prompt is not kept)
                messages.append(ChatMessageAssistant(
                    id=f"{r.id}:judgment:{index}", content=strip_control(j.raw_response),
                    model=j.judge_model or r.judge_model, source="generate",
                    metadata={"round_id": r.id, "phase": "judgment", "speaker": "judge", "judgment_index": index,
                              "judgment_key": str(getattr(j, "key", "") or ""),
                              "model": j.judge_model or r.judge_model}))
    first = rounds[0]
    by_model, by_role = _usage_by(rounds)
    dilemma = first.settings.dilemma or {}
    scenario = str(dilemma.get("core_scenario") or "")
    presentation = first.phase(PhaseType.PRESENTATION)
    text = scenario or (presentation.prompt if presentation else "") or first.dilemma_title or first.dilemma_id
    finished = [r.finished_at for r in rounds if r.finished_at is not None]
    error = next((strip_control(r.error) for r in rounds if r.error), None)
    return EvalSample(
        id=ex_id, epoch=1, input=strip_control(text), target="", messages=messages,
        output=ModelOutput.from_content(last_judge[0], last_judge[1]) if last_judge else ModelOutput(),
        scores=scores or None,
        metadata={"exchange_id": ex_id, "dilemma_id": first.dilemma_id,
                  "dilemma_title": strip_control(first.dilemma_title), "tournament_id": first.tournament_id,
                  "team_a_model": first.team_a_model, "team_b_model": first.team_b_model,
                  "judges": [r.judge_model for r in rounds], "round_ids": [r.id for r in rounds],
                  "round_status": {r.id: str(r.status) for r in rounds},
                  "needs_review": any(score_grid(j).needs_review for r in rounds for j in round_judgments(r)),
                  "overrides": sum(len(j.active_overrides()) for r in rounds for j in round_judgments(r)),
                  "blind_judge": first.blind_judge, "error": error},
        model_usage={m: _model_usage(u) for m, u in by_model.items()},
        role_usage={k: _model_usage(u) for k, u in by_role.items()},
        started_at=_iso(min(r.timestamp for r in rounds)),
        completed_at=_iso(max(finished)) if finished else None,
        total_time=(max(finished) - min(r.timestamp for r in rounds)).total_seconds() if finished else None,
        working_time=sum(p.latency or 0.0 for r in rounds for p in r.phases if not p.reused_from),
        uuid=f"ebtui-{ex_id}",
    )


def build_eval_log(rounds: Sequence[Round], *, tournament: Tournament | None = None, task: str = "",
                   families: Mapping[str, str] | None = None) -> EvalLog:
    """The EvalLog (inspect_ai.log.EvalLog) of these rounds, samples included."""
    require_inspect()
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )

    exs = exchanges(rounds)
    samples = [_sample(ex.id, ex.rounds) for ex in exs]
    by_model, by_role = _usage_by(rounds)
    created = min((r.timestamp for r in rounds), default=datetime.now(UTC))
    finished = [r.finished_at for r in rounds if r.finished_at is not None]
    name = task or (f"ebtui/{tournament.name or tournament.id}" if tournament else "ebtui/rounds")
    # per score name, the mean effective score over its criteria and samples (a glance; the numbers that
    # count are the report's, which adjust for the judges)
    sums: dict[str, list[float]] = defaultdict(list)
    for s in samples:
        for key, sc in (s.scores or {}).items():
            if isinstance(sc.value, Mapping):  # (always: _scores gives {criterion: effective score})
                sums[key] += [float(v) for v in sc.value.values() if v is not None]
    results = EvalResults(
        total_samples=len(samples),
        completed_samples=sum(1 for ex in exs if all(r.status == RoundStatus.COMPLETE for r in ex.rounds)),
        scores=[EvalScore(name=key, scorer="ebtui_judge", scored_samples=sum(1 for s in samples if key in
                                                                              (s.scores or {})),
                          metrics={"mean": EvalMetric(name="mean", value=sum(v) / len(v))} if v else {})
                for key, v in sorted(sums.items())],
    )
    models = sorted({m for r in rounds for m in (r.team_a_model, r.team_b_model, r.judge_model)})
    spec = EvalSpec(
        created=_iso(created), task=name, task_id=tournament.id if tournament else "rounds",
        task_version=0, run_id=tournament.id if tournament else "rounds",
        eval_id=f"ebtui-{tournament.id if tournament else 'rounds'}",
        dataset=EvalDataset(name="ebtui dilemmas", samples=len(samples), sample_ids=[s.id for s in samples]),
        model="ebtui/" + ("+".join(models) if len(models) <= 4 else f"{len(models)}-models"),
        config=EvalConfig(), packages={"ebtui": __version__},
        metadata={"source": "ebtui", "models": models, "judges": sorted({r.judge_model for r in rounds}),
                  "families": dict(families or {}), "rounds": len(rounds), "exchanges": len(exs),
                  "tournament": tournament.model_dump(mode="json", exclude={"config"}) if tournament else None,
                  "score_names": "team_<a|b>/<judge>[#judgment index]: {criterion: effective score}"},
    )
    try:  # model output is untrusted: ask the viewer to show it as plain text (inspect_ai >= 0.3.2xx)
        from inspect_ai.viewer import ViewerConfig

        spec.viewer = ViewerConfig(trust_content=False)
    except ImportError:
        pass
    stats = EvalStats(started_at=_iso(created) or "", completed_at=_iso(max(finished)) if finished else "",
                      model_usage={m: _model_usage(u) for m, u in by_model.items()},
                      role_usage={k: _model_usage(u) for k, u in by_role.items()})
    return EvalLog(version=2, status="success", eval=spec, results=results, stats=stats, samples=samples)


def default_name(tournament: Tournament | None, created: datetime | None = None) -> str:
    """Inspect's file-name pattern ({timestamp}_{task}_{id}.eval), so its log list shows task and id."""
    when = (created or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H-%M-%S+00-00")
    ident = "".join(ch for ch in (tournament.id if tournament else "rounds") if ch.isalnum())  # no _ or -
    return f"{when}_ebtui_{ident}.eval"


def write_inspect_log(rounds: Sequence[Round], path: Path, *, tournament: Tournament | None = None,
                      families: Mapping[str, str] | None = None) -> Path:
    """Write the log to `path` (a directory: a file named by `default_name` inside it); return the file."""
    log = require_inspect()
    eval_log = build_eval_log(rounds, tournament=tournament, families=families)
    if path.suffix != ".eval":
        path.mkdir(parents=True, exist_ok=True)
        path = path / default_name(tournament)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    log.write_eval_log(eval_log, str(path), format="eval")
    return path


__all__ = ["build_eval_log", "default_name", "score_name", "write_inspect_log"]
