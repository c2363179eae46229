"""A model's family, for the same-family preference: `family = "..."` in models.toml, else its provider
there, else the family recorded in its rounds when they were played (`Round.settings.families`), else a
name heuristic (`model_family`), else the model's own name. See docs/STATISTICS.md, "Families".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

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
    """The provider family of a model, by a documented heuristic.

    1. A configured provider that names one family (anthropic, google/gemini, xai) decides.
    2. Otherwise the name: lower-cased, split on "/" (e.g. "meta-llama/Llama-3"), the first part that starts
       with a known prefix (FAMILY_PREFIXES: claude→anthropic, gpt/o1/o3→openai, gemini→google, grok→xai,
       qwen→alibaba, llama→meta, mistral→mistral, deepseek→deepseek, ...) decides.
    3. A configured provider "openai" with an unrecognised name → openai; else the name itself (its own family).
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



def recorded_families(rounds: Iterable[Any]) -> dict[str, str]:
    """model -> family as recorded in the rounds' settings when they were played (the newest round wins)."""
    out: dict[str, str] = {}
    for r in sorted(rounds, key=lambda r: str(getattr(r, "timestamp", "") or "")):
        out.update(getattr(r.settings, "families", None) or {})
    return out


def resolve_families(names: Iterable[str], config: Any | None = None,
                     recorded: Mapping[str, str] | None = None) -> dict[str, str]:
    """name -> family for every name, from a ModelsConfig (or None) and the families recorded in the rounds
    (`recorded_families`), by the rules of the module docstring."""
    models = getattr(config, "models", None) or {}
    seen = recorded or {}
    out: dict[str, str] = {}
    for n in names:
        cfg = models.get(n)
        if cfg is not None:
            out[n] = cfg.model_family.lower()  # ModelConfig owns "family, else the provider"
        elif seen.get(n):
            out[n] = seen[n].lower()
        else:
            out[n] = model_family(n)
    return out


def family_function(families: Mapping[str, str] | None) -> Callable[[str], str]:
    """A lookup that falls back to the name heuristic for names the mapping lacks."""
    fam = dict(families or {})
    return lambda m: fam.get(m) or model_family(m)
