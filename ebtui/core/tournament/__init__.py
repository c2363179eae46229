"""Tournaments (ebtui.core.tournament): many rounds over a schedule, concurrently, within limits and a budget.

Where things live: config.py (tournament.toml), schedule.py (who plays whom; built once), plan.py (checks
before a run; the dry-run estimate), costs.py (token estimate, prices, budget), limits.py (concurrency:
the limiters and the per-call client wrapper), events.py (progress, events, summary), runner.py
(TournamentRunner, the run lock).
"""

from ebtui.core.tournament.config import (
    Limits,
    TournamentConfig,
    TournamentConfigError,
    load_tournament_config,
    parse_tournament_config,
)
from ebtui.core.tournament.costs import (
    CHARS_PER_TOKEN,
    DEFAULT_OUTPUT_TOKENS,
    Budget,
    ModelInfo,
    estimate_tokens,
    model_infos,
)
from ebtui.core.tournament.events import (
    Progress,
    ProgressUpdated,
    RoundCompleted,
    RoundNotRun,
    TournamentEvent,
    TournamentFinished,
    TournamentStarted,
    TournamentSummary,
    fmt_duration,
    fmt_tokens,
    summarize_rounds,
)
from ebtui.core.tournament.limits import BUDGET_ERROR_PREFIX, AdaptiveLimiter, CallStats, LimitedClient
from ebtui.core.tournament.plan import (
    DryRunEstimate,
    TournamentPlan,
    TournamentSetupError,
    estimate_tournament,
    plan_tournament,
)
from ebtui.core.tournament.runner import TournamentBusyError, TournamentRunner, tournament_is_running
from ebtui.core.tournament.schedule import (
    Exchange,
    Schedule,
    ScheduledRound,
    ScheduleError,
    build_schedule,
    make_schedule,
)

__all__ = [
    "BUDGET_ERROR_PREFIX",
    "CHARS_PER_TOKEN",
    "DEFAULT_OUTPUT_TOKENS",
    "AdaptiveLimiter",
    "Budget",
    "CallStats",
    "DryRunEstimate",
    "Exchange",
    "LimitedClient",
    "Limits",
    "ModelInfo",
    "Progress",
    "ProgressUpdated",
    "RoundCompleted",
    "RoundNotRun",
    "Schedule",
    "ScheduleError",
    "ScheduledRound",
    "TournamentBusyError",
    "TournamentConfig",
    "TournamentConfigError",
    "TournamentEvent",
    "TournamentFinished",
    "TournamentPlan",
    "TournamentRunner",
    "TournamentSetupError",
    "TournamentStarted",
    "TournamentSummary",
    "build_schedule",
    "estimate_tokens",
    "estimate_tournament",
    "fmt_duration",
    "fmt_tokens",
    "load_tournament_config",
    "make_schedule",
    "model_infos",
    "parse_tournament_config",
    "plan_tournament",
    "summarize_rounds",
    "tournament_is_running",
]
