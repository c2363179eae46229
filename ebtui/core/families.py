"""A model's family, for the same-family preference: the one rule, worked out here and nowhere else:
`family = "..."` in models.toml, else its provider there, else the family recorded in its rounds
(`Round.settings.families`, the newest round winning), else the name heuristic `model_family`, else the
model's own name. See docs/STATISTICS.md, "Families".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ebtui.core.facts import round_seats

if TYPE_CHECKING:
    from ebtui.config import ModelConfig, ModelsConfig
    from ebtui.core.records import Round

#: name fragments -> provider family; checked against each "/"-separated part of a model name
FAMILY_PREFIXES: tuple[tuple[str, str], ...] = (
    ("claude", "anthropic"), ("anthropic", "anthropic"),
    ("gpt", "openai"), ("chatgpt", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
    ("openai", "openai"), ("davinci", "openai"),
    ("gemini", "google"), ("gemma", "google"), ("palm", "google"), ("google", "google"),
    ("grok", "xai"), ("xai", "xai"),
    ("qwen", "alibaba"), ("qwq", "alibaba"),
    ("llama", "meta"), ("meta-llama", "meta"),
    ("mistral", "mistral"), ("mixtral", "mistral"), ("codestral", "mistral"), ("magistral", "mistral"),
    ("deepseek", "deepseek"), ("phi", "microsoft"), ("command", "cohere"), ("kimi", "moonshot"),
    ("smollm", "huggingface"), ("scripted", "scripted"),
)

#: configured provider -> family (providers that serve many families, e.g. openai-compatible hosts, are
#: not in here: the name decides for them)
PROVIDER_FAMILY: dict[str, str] = {"anthropic": "anthropic", "google": "google", "gemini": "google", "xai": "xai"}


def model_family(name: str, provider: str | None = None) -> str:
    """The provider family of a model by the name heuristic (rule 4).

    1. A provider that names one family (anthropic, google/gemini, xai) decides.
    2. Otherwise the name: lower-cased, split on "/" (e.g. "meta-llama/Llama-3"), the first part that starts
       with a known prefix (FAMILY_PREFIXES) decides.
    3. A provider "openai" with an unrecognised name → openai; else the name itself (its own family).
    """
    if provider and provider.lower() in PROVIDER_FAMILY:
        return PROVIDER_FAMILY[provider.lower()]
    parts = [p for p in name.lower().split("/") if p]
    for part in reversed(parts):
        for prefix, family in FAMILY_PREFIXES:
            if part.startswith(prefix) and (len(part) == len(prefix) or not part[len(prefix)].isalpha()
                                            or len(prefix) >= 4):
                return family
    if provider and provider.lower() == "openai":
        return "openai"
    return name.lower()


def configured_family(cfg: ModelConfig) -> str:
    """A configured model's family as models.toml gives it (rules 1-2): `family` when set, else the provider;
    as written (this is what a round records)."""
    return cfg.family or cfg.provider


def newest_recorded(recorded: Iterable[tuple[object, Mapping[str, str] | None]]) -> dict[str, str]:
    """model -> family from (timestamp, the families a round recorded) pairs: the newest round wins (rule 3)."""
    out: dict[str, str] = {}
    for _, families in sorted(recorded, key=lambda pair: str(pair[0] or "")):
        out.update(families or {})
    return out


def resolve_families(names: Iterable[str], config: ModelsConfig | None = None,
                     recorded: Mapping[str, str] | None = None) -> dict[str, str]:
    """name -> family (lower-cased) for every name, from models.toml (or None) and the families recorded in
    the rounds (`newest_recorded`), by the rules of the module docstring."""
    models = config.models if config is not None else {}
    seen = recorded or {}
    out: dict[str, str] = {}
    for n in names:
        cfg = models.get(n)
        if cfg is not None:
            out[n] = configured_family(cfg).lower()
        elif seen.get(n):
            out[n] = seen[n].lower()
        else:
            out[n] = model_family(n)
    return out


def round_families(rounds: Sequence[Round], config: ModelsConfig | None = None) -> dict[str, str]:
    """Every seated model's family over these rounds (`resolve_families` with what the rounds recorded)."""
    names = {m for r in rounds for m in round_seats(r).values()}
    return resolve_families(names, config, newest_recorded((r.timestamp, r.settings.families) for r in rounds))


def family_function(families: Mapping[str, str] | None) -> Callable[[str], str]:
    """A lookup over resolved families that falls back to the name heuristic for names the mapping lacks."""
    fam = dict(families or {})
    return lambda m: fam.get(m) or model_family(m)
