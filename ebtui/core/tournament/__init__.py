"""Tournaments (ebtui.core.tournament): many rounds over a schedule, concurrently, within limits and a budget.

Where things live: config.py (tournament.toml), schedule.py (who plays whom; built once), plan.py (checks
before a run; the dry-run estimate), costs.py (token estimate, prices, budget), limits.py (concurrency:
the limiters and the per-call client wrapper), events.py (progress, events, summary), runner.py
(TournamentRunner, the run lock).
"""

from ebtui.core.tournament import config, costs, events, limits, plan, runner, schedule
from ebtui.core.tournament.config import *  # noqa: F403
from ebtui.core.tournament.costs import *  # noqa: F403
from ebtui.core.tournament.events import *  # noqa: F403
from ebtui.core.tournament.limits import *  # noqa: F403
from ebtui.core.tournament.plan import *  # noqa: F403
from ebtui.core.tournament.runner import *  # noqa: F403
from ebtui.core.tournament.schedule import *  # noqa: F403

# the facade: each module's __all__ is what the package offers (one list per name, kept beside its code)
__all__ = [*config.__all__, *costs.__all__, *events.__all__, *limits.__all__, *plan.__all__, *runner.__all__,
           *schedule.__all__]
