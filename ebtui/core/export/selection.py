"""Which rounds, and which model families, an export or the Python API uses: the same rules as
`ebtui report`, so their numbers agree with `report --json`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ebtui.core.records import Round
from ebtui.core.views.means import rounds_with_team_seat


def report_families(rounds: Sequence[Round], models_file: str | Path | None = None) -> dict[str, str]:
    """model -> family as `ebtui report` resolves it: models.toml (`family`, else provider), else the family
    recorded in the rounds, else the name heuristic. An explicit models file that cannot be read is a
    ValueError (one line); an unreadable default one is no reason to refuse (the other rules apply)."""
    from ebtui.config import ConfigError, load_models_config
    from ebtui.core.analysis.families import recorded_families, resolve_families

    names = {m for r in rounds for m in (r.team_a_model, r.team_b_model, r.judge_model)}
    try:
        config = load_models_config(models_file)
    except ConfigError as exc:
        if models_file:
            raise ValueError(str(exc)) from None
        return resolve_families(names, None, recorded_families(rounds))
    return resolve_families(names, config, recorded_families(rounds))


def filter_rounds(rounds: Sequence[Round], *, model: str | None = None) -> list[Round]:
    """`report --model`: only rounds in which the model sat at Team A or B."""
    return rounds_with_team_seat(rounds, model) if model else list(rounds)


__all__ = ["filter_rounds", "report_families"]
