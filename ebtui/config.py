"""models.toml: which models exist, how to reach them, what they cost.

    [models.claude]
    provider = "anthropic"
    model = "claude-sonnet-4-5"
    price_in = 3.0          # USD per million input tokens
    price_out = 15.0

Keys are never in this file: a model names the environment variable that holds its key (`api_key_env`,
defaulted per provider) and the key is read from the environment when the model is used. This module knows
the provider names and their presets, never the providers' code.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ebtui import redact
from ebtui.errors import read_bytes
from ebtui.locations import models_config_candidates

BUILTIN_NAMES = ("local", "scripted")


class ConfigError(Exception):
    """A problem in models.toml, named by file, model and field."""


@dataclass(frozen=True)
class ProviderPreset:
    client: str  # which client implements it: anthropic, openai, google, local, scripted (not the model family)
    base_url: str | None = None
    api_key_env: str | None = None
    needs_model: bool = True
    supports_temperature: bool = True
    extras: frozenset[str] = frozenset()  # provider-specific fields accepted under [models.NAME]


_OPENAI_EXTRAS = frozenset({"json_schema", "reasoning_effort", "top_p", "seed", "extra_headers", "batch",
                            "prompt_cache_key"})

PROVIDERS: dict[str, ProviderPreset] = {
    # Anthropic's API version 2026-10-21 (anthropic 2.x) has no temperature/top_p/top_k.
    "anthropic": ProviderPreset("anthropic", None, "ANTHROPIC_API_KEY", supports_temperature=False,
                                extras=frozenset({"cache_system", "extra_headers", "batch"})),
    "openai": ProviderPreset("openai", None, "OPENAI_API_KEY", extras=_OPENAI_EXTRAS),
    "google": ProviderPreset("google", None, "GEMINI_API_KEY", extras=frozenset({"top_p", "seed", "batch"})),
    "xai": ProviderPreset("openai", "https://api.x.ai/v1", "XAI_API_KEY", extras=_OPENAI_EXTRAS),
    "qwen": ProviderPreset("openai", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY",
                           extras=_OPENAI_EXTRAS),
    "openrouter": ProviderPreset("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", extras=_OPENAI_EXTRAS),
    "together": ProviderPreset("openai", "https://api.together.xyz/v1", "TOGETHER_API_KEY", extras=_OPENAI_EXTRAS),
    "ollama": ProviderPreset("openai", "http://localhost:11434/v1", None, extras=_OPENAI_EXTRAS),
    "vllm": ProviderPreset("openai", "http://localhost:8000/v1", None, extras=_OPENAI_EXTRAS),
    "llamacpp": ProviderPreset("openai", "http://localhost:8080/v1", None, extras=_OPENAI_EXTRAS),
    "openai_compatible": ProviderPreset("openai", None, None, extras=_OPENAI_EXTRAS),
    "local": ProviderPreset("local", needs_model=False,
                            extras=frozenset({"model_path", "n_ctx", "n_threads", "seed", "top_p", "answer_words",
                                              "json_string_chars", "json_max_tokens", "repeat_penalty"})),
    "scripted": ProviderPreset("scripted", needs_model=False, supports_temperature=False,
                               extras=frozenset({"latency_s", "tokens_per_second", "judge_mode", "seed",
                                                 "rules", "faults"})),
}


class ModelConfig(BaseModel):
    """One `[models.NAME]` table. Holds the key's variable name, never the key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    provider: str
    model: str = ""
    api_key_env: str | None = None
    base_url: str | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    price_in: float | None = Field(default=None, ge=0.0)  # USD per million input tokens
    price_out: float | None = Field(default=None, ge=0.0)  # USD per million output tokens
    #: USD per million input tokens served from the prompt cache (default: the provider's usual share of
    #: price_in, see ebtui.providers.common.CACHE_READ_SHARE)
    price_cached_in: float | None = Field(default=None, ge=0.0)
    max_concurrency: int = Field(default=4, gt=0)
    timeout_s: float = Field(default=120.0, gt=0)  # read timeout: the longest wait for any bytes
    connect_timeout_s: float = Field(default=10.0, gt=0)
    stall_timeout_s: float = Field(default=60.0, gt=0)  # longest wait for the next streamed token
    attempts: int = Field(default=3, ge=1, le=10)  # tries per call, the first included
    backoff_s: float = Field(default=1.0, ge=0)  # first retry waits about this long, doubling after
    backoff_max_s: float = Field(default=30.0, ge=0)
    retry_after_max_s: float = Field(default=60.0, ge=0)  # a longer Retry-After is a failure, not a wait
    #: the model family for the same-family preference (default: the provider); not the client type
    family: str | None = Field(default=None, min_length=1)
    extras: dict[str, Any] = Field(default_factory=dict)
    source: Path | None = Field(default=None, exclude=True)  # the file it came from (None: built in)

    @property
    def preset(self) -> ProviderPreset:
        return PROVIDERS[self.provider]

    @property
    def client_type(self) -> str:
        """Which client implements the provider (every OpenAI-compatible preset is "openai")."""
        return self.preset.client

    @property
    def model_family(self) -> str:
        """The family of the model for the statistics: `family` when set, else the provider."""
        return self.family or self.provider

    @property
    def effective_base_url(self) -> str | None:
        return self.base_url or self.preset.base_url

    @property
    def key_env(self) -> str | None:
        """The environment variable holding this model's key (None: no key needed)."""
        return self.api_key_env or self.preset.api_key_env

    @property
    def key_set(self) -> bool:
        env = self.key_env
        return env is None or bool(os.environ.get(env))

    def api_key(self) -> str | None:
        """The key, read from the environment now. Raises ConfigError when its variable is unset."""
        env = self.key_env
        if env is None:
            return None
        value = os.environ.get(env)
        if not value:
            raise ConfigError(_where(self.source, self.name, "api_key_env",
                                     f"environment variable {env} is not set"))
        redact.register(value)  # never stored or shown: see ebtui.redact
        return value

    def describe(self) -> str:
        return f"{self.name} ({self.provider}{': ' + self.model if self.model else ''})"


class ModelsConfig(BaseModel):
    models: dict[str, ModelConfig]
    source: Path | None = None
    default: str | None = None  # optional top-level `default = "NAME"`

    def get(self, name: str) -> ModelConfig:
        try:
            return self.models[name]
        except KeyError:
            known = ", ".join(sorted(self.models))
            where = str(self.source) if self.source else "models"
            raise ConfigError(f"{where}: no model named {name!r} (configured: {known})") from None


def _where(source: Path | None, model: str | None, field: str | None, msg: str) -> str:
    parts = [str(source) if source else "built-in models"]
    if model:
        parts.append(f"model {model!r}")
    if field:
        parts.append(f"field {field!r}")
    return ": ".join([", ".join(parts), msg])


def builtin_models() -> dict[str, ModelConfig]:
    return {
        "local": ModelConfig(name="local", provider="local", model="SmolLM2-135M-Instruct", max_concurrency=1,
                             max_tokens=512, stall_timeout_s=120.0),
        "scripted": ModelConfig(name="scripted", provider="scripted", model="scripted", max_concurrency=64),
        **demo_models(),
    }


#: the shipped demo set: scripted models paced like real ones (a first-token delay, then 30-60 tokens a
#: second), offered when no key is set so a new user sees the three panes stream. Their text is canned.
DEMO_ROLES = ("demo-a", "demo-b", "demo-judge")
_DEMO_PACE = {"demo-a": (0.8, 45.0), "demo-b": (1.1, 38.0), "demo-judge": (1.4, 55.0)}


def demo_models() -> dict[str, ModelConfig]:
    return {
        name: ModelConfig(name=name, provider="scripted", model="demo", max_concurrency=8,
                          extras={"latency_s": first, "tokens_per_second": tps, "seed": name})
        for name, (first, tps) in _DEMO_PACE.items()
    }


def parse_model(name: str, table: Any, source: Path | None) -> ModelConfig:
    if not isinstance(table, dict):
        raise ConfigError(_where(source, name, None, "must be a table ([models.NAME])"))
    data = dict(table)
    provider = data.get("provider")
    if provider is None:
        if name in BUILTIN_NAMES:
            provider = name
        else:
            raise ConfigError(_where(source, name, "provider", f"missing (one of: {', '.join(PROVIDERS)})"))
    if not isinstance(provider, str) or provider not in PROVIDERS:
        raise ConfigError(_where(source, name, "provider",
                                 f"unknown provider {provider!r} (one of: {', '.join(PROVIDERS)})"))
    preset = PROVIDERS[provider]
    data["provider"] = provider
    if "name" in data or "extras" in data or "source" in data:
        bad = next(k for k in ("name", "extras", "source") if k in data)
        raise ConfigError(_where(source, name, bad, "is not a settable field"))
    known = set(ModelConfig.model_fields) - {"name", "extras", "source"}
    extras = {k: data.pop(k) for k in list(data) if k not in known}
    for key in extras:
        if key not in preset.extras:
            allowed = ", ".join(sorted(preset.extras)) or "none"
            raise ConfigError(_where(source, name, key,
                                     f"unknown field for provider {provider!r} (provider extras: {allowed})"))
    if data.get("temperature") is not None and not preset.supports_temperature:
        raise ConfigError(_where(source, name, "temperature",
                                 f"provider {provider!r} does not take a temperature "
                                 "(Anthropic's current API version rejects sampling settings); remove it"))
    if preset.needs_model and not data.get("model"):
        raise ConfigError(_where(source, name, "model", f"missing: provider {provider!r} needs a model name"))
    if provider == "openai_compatible" and not data.get("base_url"):
        raise ConfigError(_where(source, name, "base_url", "missing: provider 'openai_compatible' needs a base_url"))
    if name in BUILTIN_NAMES and provider == name and not data.get("model"):
        data["model"] = builtin_models()[name].model
    if provider == "local":  # one generation at a time per process, slow first tokens: as the built-in
        for key in ("max_concurrency", "max_tokens", "stall_timeout_s"):
            data.setdefault(key, getattr(builtin_models()["local"], key))
    _check_extras(name, provider, extras, source)
    try:
        return ModelConfig(name=name, extras=extras, source=source, **data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or None
        raise ConfigError(_where(source, name, field, f"{err.get('msg')} (got {err.get('input')!r})")) from None


def _check_extras(name: str, provider: str, extras: dict[str, Any], source: Path | None) -> None:
    def bad(key: str, msg: str) -> ConfigError:
        return ConfigError(_where(source, name, key, msg))

    for key, value in extras.items():
        if key in ("latency_s", "tokens_per_second", "top_p") and (
            isinstance(value, bool) or not isinstance(value, int | float) or value < 0
        ):
            raise bad(key, f"must be a number >= 0 (got {value!r})")
        if key in ("n_ctx", "n_threads") and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise bad(key, f"must be a positive integer (got {value!r})")
        if key in ("answer_words", "json_string_chars", "json_max_tokens") and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise bad(key, f"must be an integer >= 0 (got {value!r})")
        if key == "repeat_penalty" and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
            raise bad(key, f"must be a number > 0 (got {value!r})")
        if key in ("json_schema", "cache_system", "batch") and not isinstance(value, bool):
            raise bad(key, f"must be true or false (got {value!r})")
        if key == "judge_mode" and value not in ("valid", "malformed", "prose", "out_of_range"):
            raise bad(key, f"must be one of valid, malformed, prose, out_of_range (got {value!r})")
        if key in ("model_path", "reasoning_effort", "prompt_cache_key") and not isinstance(value, str):
            raise bad(key, f"must be a string (got {value!r})")
        if key == "seed" and not isinstance(value, int | str):
            raise bad(key, f"must be an integer or string (got {value!r})")
        if key == "extra_headers" and not (
            isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        ):
            raise bad(key, "must be a table of string values")
        if key == "rules" and not (
            isinstance(value, list)
            and all(isinstance(r, dict) and isinstance(r.get("reply"), str)
                    and (isinstance(r.get("match", ""), str)
                         or (isinstance(r["match"], list) and all(isinstance(m, str) for m in r["match"])))
                    for r in value)
        ):
            raise bad(key, "must be a list of tables with 'match' (a string or a list of strings, all of which "
                           "must occur) and 'reply' strings")
        if key == "faults" and not (isinstance(value, list) and all(isinstance(f, dict) for f in value)):
            raise bad(key, "must be a list of tables (kind, match, times, after_tokens)")


def parse_models(data: dict[str, Any], source: Path | None) -> ModelsConfig:
    models = {name: cfg for name, cfg in builtin_models().items() if name not in DEMO_ROLES}
    unknown = set(data) - {"models", "default"}
    if unknown:
        raise ConfigError(_where(source, None, sorted(unknown)[0], "unknown top-level key (expected [models.NAME])"))
    tables = data.get("models", {})
    if not isinstance(tables, dict):
        raise ConfigError(_where(source, None, "models", "must be a table of [models.NAME] tables"))
    for name, table in tables.items():
        models[name] = parse_model(name, table, source)
    for name, cfg in demo_models().items():  # after the file's own models in every list and picker
        models.setdefault(name, cfg)
    default = data.get("default")
    if default is not None and (not isinstance(default, str) or default not in models):
        raise ConfigError(_where(source, None, "default", f"no model named {default!r}"))
    return ModelsConfig(models=models, source=source, default=default)


def load_models_file(path: Path) -> ModelsConfig:
    raw = read_bytes(path, ConfigError, " models file")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    return parse_models(data, path)


def load_models_config(explicit: str | Path | None = None) -> ModelsConfig:
    """The models: from --models, $EBTUI_MODELS, ./models.toml, then the user config dir (first found).

    `local` and `scripted` always exist. An explicit file or $EBTUI_MODELS that does not exist is an error;
    the two default locations are optional.
    """
    candidates = models_config_candidates(explicit)
    must_exist = 1 if explicit else 0
    if os.environ.get("EBTUI_MODELS"):
        must_exist += 1
    for i, path in enumerate(candidates):
        if path.is_file():
            config = load_models_file(path)
            redact.register_env(m.key_env for m in config.models.values())  # see ebtui.redact
            return config
        if i < must_exist:
            origin = "--models" if explicit and i == 0 else "EBTUI_MODELS"
            raise ConfigError(f"{path}: models file not found (from {origin})")
    return ModelsConfig(models=builtin_models(), source=None)


def default_role_models(config: ModelsConfig) -> tuple[str, str, str]:
    """Team A, Team B and the judge to preselect: the default model for all three when one is set or has
    its key; else the demo set (they stream like real models, with no key and no wait)."""
    name = default_model_name(config)
    if name != "local" or config.default == "local":
        return (name, name, name)
    if all(n in config.models for n in DEMO_ROLES):
        return DEMO_ROLES
    return (name, name, name)


def default_model_name(config: ModelsConfig) -> str:
    """`default` when set; else the first configured model that needs a key and has it set; else "local"."""
    if config.default:
        return config.default
    for name, cfg in config.models.items():
        if name in BUILTIN_NAMES or name in DEMO_ROLES:
            continue
        if cfg.key_env and cfg.key_set:
            return name
    return "local"
