"""Setting a tournament up for batch mode: `prepare_batch(plan, clients, store_root)` returns the clients to
run with (a batch model's calls go through its provider's batch API, every other model streams) and the
coordinator, and adjusts the plan's runtime settings so a wave is all of the tournament's calls at once.
The schedule is untouched, so a batch run resumes a streamed one and the other way round. See docs/BATCH.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ebtui.core.batch.coordinator import BatchCoordinator, BatchSettings
from ebtui.core.batch.ledger import BatchLedger
from ebtui.providers.base import ModelClient
from ebtui.providers.batch import DEFAULT_BATCH_DISCOUNT, batch_client, supports_batch

if TYPE_CHECKING:
    from ebtui.config import ModelsConfig
    from ebtui.core.tournament.plan import TournamentPlan

#: a limit no batch model reaches (the runner takes per-model limits as numbers)
UNLIMITED = 1_000_000


def batch_model_names(names: list[str], models_config: ModelsConfig) -> list[str]:
    """The names among `names` whose provider offers a batch API (models.toml `batch` decides first)."""
    return [n for n in names if n in models_config.models and supports_batch(models_config.models[n])]


def prepare_batch(
    plan: TournamentPlan,
    clients: Mapping[str, ModelClient],
    store_root: str | Path,
    settings: BatchSettings | None = None,
    *,
    on_change: Callable[[], None] | None = None,
) -> tuple[dict[str, ModelClient], BatchCoordinator | None]:
    """(clients for the runner, coordinator or None when no model of the tournament has a batch API).
    Mutates `plan.config` and `plan.models_config` (runtime settings only). Raises LedgerError when the
    tournament's batch ledger cannot be read and ConfigError for a missing key."""
    from ebtui.core.tournament.config import Limits

    config, models_config = plan.config, plan.models_config
    names = batch_model_names(config.all_model_names(), models_config)
    if not names:
        return dict(clients), None
    bclients = {n: batch_client(models_config.models[n]) for n in names}
    ledger = BatchLedger.open(store_root, plan.tournament_id)
    coord = BatchCoordinator(ledger, {n: c for n, c in bclients.items() if c is not None}, settings,
                             on_change=on_change)
    out = dict(clients)
    for n in names:
        out[n] = coord.client(n, clients[n])

    batch_set = set(names)
    providers_all_batch = {
        models_config.models[n].provider for n in names
        if all(m in batch_set for m in config.all_model_names()
               if models_config.models[m].provider == models_config.models[n].provider)
    }
    limits = Limits(
        providers={p: k for p, k in config.limits.providers.items() if p not in providers_all_batch},
        models={m: k for m, k in config.limits.models.items() if m not in batch_set},
    )
    exchanges = len(plan.schedule.exchanges)
    plan.config = config.model_copy(update={"concurrency": max(config.concurrency, min(1024, exchanges)),
                                            "limits": limits})
    models = dict(models_config.models)
    for n in names:
        cfg = models[n]
        disc = getattr(bclients[n], "discount", DEFAULT_BATCH_DISCOUNT)
        models[n] = cfg.model_copy(update={
            "max_concurrency": UNLIMITED,
            "price_in": None if cfg.price_in is None else cfg.price_in * disc,
            "price_out": None if cfg.price_out is None else cfg.price_out * disc,
        })
    plan.models_config = models_config.model_copy(update={"models": models})
    if hasattr(plan, "infos"):
        from ebtui.core.tournament.costs import model_infos

        plan.infos = model_infos(config.all_model_names(), {}, plan.models_config)
    return out, coord
