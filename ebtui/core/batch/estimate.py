"""What a tournament costs at list price, at the providers' batch price, and what prompt caching is
expected to save, built on the dry run's estimate. Cache savings assume each call on a dilemma after its
first reads the stable prefix from the cache when it reaches the model's minimum cacheable length; an
expectation, not a promise (docs/BATCH.md, "What it saves").
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, TypedDict

from ebtui.providers.batch import DEFAULT_BATCH_DISCOUNT, supports_batch
from ebtui.providers.common import CACHE_READ_SHARE, CACHE_WRITE_SHARE

if TYPE_CHECKING:
    from ebtui.core.tournament.plan import DryRunEstimate, TournamentPlan
    from ebtui.core.tournament.schedule import Schedule

#: the smallest cacheable prefix, in tokens, when nothing more specific is known (OpenAI, older Claude)
MIN_CACHEABLE_TOKENS = 1024


def min_cacheable_tokens(provider: str, model: str) -> int:
    """The provider's minimum cacheable prefix for this model, as published: Claude Sonnet 4.6 2,048, Opus
    4.5+ and Haiku 4.5 4,096, other Claude 1,024; Gemini 3 4,096, Gemini 2.5 2,048; OpenAI 1,024."""
    m = model.lower()
    if provider == "anthropic":
        if re.search(r"opus-4-[5-9]|haiku-4-5", m):
            return 4096
        if re.search(r"sonnet-4-[6-9]", m):
            return 2048
        return 1024
    if provider == "google":
        return 4096 if re.search(r"gemini-[3-9]", m) else 2048
    return MIN_CACHEABLE_TOKENS
#: providers whose servers cache prompt prefixes and bill cached tokens less (automatically, or at ebtui's
#: breakpoints); OpenAI-compatible presets are not assumed to
CACHING_PROVIDERS = frozenset({"openai", "anthropic", "google"})


class ModelBatchEstimate(TypedDict):
    """One model's prices in a batch estimate."""

    batch: bool  # whether its calls go through a batch API
    list_price_usd: float | None  # None: no price configured
    batch_price_usd: float | None
    input_tokens: int
    expected_cached_tokens: int
    expected_cached_share: float
    expected_cache_savings_usd: float


class BatchEstimate(TypedDict):
    """What `batch_estimate` gives (and `ebtui tournament --dry-run --batch --json` prints as "batch")."""

    models: dict[str, ModelBatchEstimate]
    list_price_usd: float
    batch_price_usd: float
    batch_share_of_list: float | None
    expected_cache_savings_usd: float
    batch_price_with_cache_usd: float
    batch_models: list[str]
    streamed_models: list[str]


def _calls_per_dilemma(schedule: Schedule) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for ex in schedule.exchanges:
        c = out.setdefault(ex.dilemma_id, Counter())
        c[ex.team_a] += 3  # presentation, rebuttal, consistency test
        c[ex.team_b] += 1
        for j in ex.judges:
            c[j] += 1
    return out


def batch_estimate(plan: TournamentPlan, est: DryRunEstimate, *, batch: bool = True) -> BatchEstimate:
    """Per model and in total: list price, batch price (batch models at their discount, the others at list
    price) and expected prompt-cache savings (already in the batch price's terms)."""
    from ebtui.core import prompts

    def estimate_tokens(text: str) -> int:  # as the dry run counts: ~4 characters a token
        return (len(text) + 3) // 4

    models_config = plan.models_config
    by_id = {d.id: d for d in plan.dilemmas}
    prefix_tokens = {d: estimate_tokens(prompts.SYSTEM_PROMPT) + estimate_tokens(prompts.stable_prefix(by_id[d]))
                     for d in by_id}
    per_dilemma = _calls_per_dilemma(plan.schedule)
    rows: dict[str, ModelBatchEstimate] = {}
    for m in sorted(est.calls):
        cfg = models_config.models.get(m)
        list_cost = est.cost_usd.get(m)
        batches = bool(batch and cfg is not None and supports_batch(cfg))
        disc = DEFAULT_BATCH_DISCOUNT if batches else 1.0
        family = cfg.client_type if cfg is not None else ""
        cached = writes = 0
        if cfg is not None and cfg.provider in CACHING_PROVIDERS:
            minimum = min_cacheable_tokens(cfg.provider, cfg.model)
            for d, counts in per_dilemma.items():
                n = counts.get(m, 0)
                if n and prefix_tokens.get(d, 0) >= minimum:
                    cached += (n - 1) * prefix_tokens[d]
                    writes += prefix_tokens[d]
        savings = 0.0
        if cfg is not None and cfg.price_in is not None:
            pcached = cfg.price_cached_in if cfg.price_cached_in is not None else \
                cfg.price_in * CACHE_READ_SHARE.get(family, 1.0)
            premium = cfg.price_in * (CACHE_WRITE_SHARE.get(family, 1.0) - 1.0)
            savings = (cached * (cfg.price_in - pcached) - writes * premium) / 1e6 * disc
        input_tokens = est.input_tokens.get(m, 0)
        rows[m] = {
            "batch": batches,
            "list_price_usd": list_cost,
            "batch_price_usd": None if list_cost is None else list_cost * disc,
            "input_tokens": input_tokens,
            "expected_cached_tokens": cached,
            "expected_cached_share": round(cached / input_tokens, 3) if input_tokens else 0.0,
            "expected_cache_savings_usd": round(savings, 6),
        }
    list_total = sum(r["list_price_usd"] or 0.0 for r in rows.values())
    batch_total = sum(r["batch_price_usd"] or 0.0 for r in rows.values())
    savings_total = sum(r["expected_cache_savings_usd"] for r in rows.values())
    return {
        "models": rows,
        "list_price_usd": list_total,
        "batch_price_usd": batch_total,
        "batch_share_of_list": round(batch_total / list_total, 4) if list_total else None,
        "expected_cache_savings_usd": round(savings_total, 6),
        "batch_price_with_cache_usd": round(batch_total - savings_total, 6),
        "batch_models": sorted(m for m, r in rows.items() if r["batch"]),
        "streamed_models": sorted(m for m, r in rows.items() if not r["batch"]),
    }
