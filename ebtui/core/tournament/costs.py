"""What calls cost: the token estimate, the per-model prices (one formula: providers.common.cost_usd) and
the tournament budget."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ebtui.core.families import configured_family
from ebtui.core.records import Round
from ebtui.providers.base import ModelClient
from ebtui.providers.common import cost_usd

__all__ = [
    "Budget",
    "CHARS_PER_TOKEN",
    "DEFAULT_OUTPUT_TOKENS",
    "ModelInfo",
    "configured_families",
    "estimate_tokens",
    "model_infos",
]

if TYPE_CHECKING:
    from ebtui.config import ModelsConfig

#: output tokens assumed per call when neither the tournament nor the model sets max_tokens
DEFAULT_OUTPUT_TOKENS = 1024
#: characters per token, for estimates
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


@dataclass
class Budget:
    """Money spent and reserved; refuses a call that would push past the limit."""

    limit_usd: float | None
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    stopped: bool = False

    def try_reserve(self, estimate_usd: float) -> bool:
        if self.limit_usd is None:
            self.reserved_usd += estimate_usd
            return True
        if self.stopped or self.spent_usd + self.reserved_usd + estimate_usd > self.limit_usd:
            self.stopped = True
            return False
        self.reserved_usd += estimate_usd
        return True

    def settle(self, estimate_usd: float, actual_usd: float | None) -> None:
        self.reserved_usd = max(0.0, self.reserved_usd - estimate_usd)
        self.spent_usd += actual_usd or 0.0


@dataclass(frozen=True)
class ModelInfo:
    """What the runner needs to know about a model beyond its client."""

    provider: str
    price_in: float | None = None  # USD per million tokens
    price_out: float | None = None
    max_tokens: int | None = None
    #: the model's own concurrency limit (models.toml max_concurrency)
    max_concurrency: int | None = None
    #: the model's family for the statistics (models.toml `family`, else its provider); None when unknown
    family: str | None = None

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        return cost_usd(input_tokens, output_tokens, self.price_in, self.price_out)



def configured_families(infos: Mapping[str, ModelInfo]) -> dict[str, str]:
    """model -> family for the models models.toml gives one (what a tournament's rounds record)."""
    return {m: info.family for m, info in infos.items() if info.family}


def model_infos(
    names: Iterable[str], clients: Mapping[str, ModelClient], models_config: ModelsConfig | None
) -> dict[str, ModelInfo]:
    """Provider and prices per model: from models.toml when given, else from the clients' attributes."""
    out: dict[str, ModelInfo] = {}
    for name in names:
        cfg = models_config.models.get(name) if models_config is not None else None
        if cfg is not None:
            out[name] = ModelInfo(cfg.provider, cfg.price_in, cfg.price_out, cfg.max_tokens, cfg.max_concurrency,
                                   configured_family(cfg))
            continue
        client = clients.get(name)
        inner = getattr(client, "inner", client)
        out[name] = ModelInfo(
            getattr(client, "provider", "unknown"),
            getattr(inner, "price_in", None),
            getattr(inner, "price_out", None),
            getattr(inner, "max_tokens", None),
            getattr(client, "max_concurrency", None),
        )
    return out




def round_cost(r: Round) -> float:
    """What a round's calls cost (0.0 when unpriced)."""
    return r.total_usage().cost_usd or 0.0
