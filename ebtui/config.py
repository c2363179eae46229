"""models.toml: which models exist, how to reach them, what they cost (`ModelConfig`, `ModelsConfig`,
`load_models_config`, `ConfigError`). Keys are never in this file: a model names the environment variable
that holds its key (`api_key_env`). This module knows the provider names and their presets, never the
providers' code. The file's fields: docs/PROVIDERS.md and models.example.toml.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationError, model_validator

from ebtui import redact
from ebtui.errors import UsageError, read_bytes
from ebtui.locations import models_config_candidates
from ebtui.settings import load_settings

BUILTIN_NAMES = ("local", "scripted")


class ConfigError(UsageError):
    """A problem in models.toml, named by file, model and field: bad input, one line and exit code 2 wherever
    it surfaces (a UsageError, so a front end catches the one type)."""


# -- provider options: one typed model per client kind, chosen by the model's `provider` -------------------------
class ProviderOptions(BaseModel):
    """The provider-specific fields of one `[models.NAME]` table (None: not set, the client's default)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class AnthropicOptions(ProviderOptions):
    cache_system: bool = True  # mark the system prompt and the prompt's stable prefix cacheable
    extra_headers: dict[str, str] | None = None
    batch: bool | None = None  # None: the provider's default (see ebtui.providers.batch)


class OpenAIOptions(ProviderOptions):
    json_schema: bool = True  # the server takes response_format json_schema
    reasoning_effort: str | None = None
    top_p: float | None = Field(default=None, ge=0)
    seed: int | str | None = None
    extra_headers: dict[str, str] | None = None
    batch: bool | None = None
    prompt_cache_key: str | None = None


class GoogleOptions(ProviderOptions):
    top_p: float | None = Field(default=None, ge=0)
    seed: int | str | None = None
    batch: bool | None = None


class LocalOptions(ProviderOptions):
    model_path: str | None = None
    n_ctx: int | None = Field(default=None, gt=0)
    n_threads: int | None = Field(default=None, gt=0)
    seed: int | str | None = None
    top_p: float | None = Field(default=None, ge=0)
    answer_words: int | None = Field(default=None, ge=0)  # 0: unbounded
    json_string_chars: int | None = Field(default=None, ge=0)  # 0: unbounded
    json_max_tokens: int | None = Field(default=None, ge=0)
    repeat_penalty: float | None = Field(default=None, gt=0)


class ScriptRuleConfig(BaseModel):
    """A scripted reply: `reply` when every one of `match` (a string or a list of strings) is in the prompt."""

    model_config = ConfigDict(frozen=True, strict=True)

    match: str | list[str] = ""
    reply: str


class ScriptedOptions(ProviderOptions):
    latency_s: float | None = Field(default=None, ge=0)
    tokens_per_second: float | None = Field(default=None, ge=0)
    judge_mode: Literal["valid", "malformed", "prose", "out_of_range"] | None = None
    seed: int | str | None = None
    rules: list[ScriptRuleConfig] = Field(default_factory=list)
    faults: list[dict[str, Any]] = Field(default_factory=list)  # {kind, match, times, after_tokens, message}


#: client kind -> its options
OPTIONS: dict[str, type[ProviderOptions]] = {
    "anthropic": AnthropicOptions,
    "openai": OpenAIOptions,
    "google": GoogleOptions,
    "local": LocalOptions,
    "scripted": ScriptedOptions,
}

OptionsT = TypeVar("OptionsT", bound=ProviderOptions)


@dataclass(frozen=True)
class ProviderPreset:
    client: str  # which client implements it: anthropic, openai, google, local, scripted (not the model family)
    base_url: str | None = None
    api_key_env: str | None = None
    needs_model: bool = True
    supports_temperature: bool = True

    @property
    def options(self) -> type[ProviderOptions]:
        """The provider-specific fields accepted under [models.NAME]: the options of its client kind."""
        return OPTIONS[self.client]


PROVIDERS: dict[str, ProviderPreset] = {
    # Anthropic's API version 2026-10-21 (anthropic 2.x) has no temperature/top_p/top_k.
    "anthropic": ProviderPreset("anthropic", None, "ANTHROPIC_API_KEY", supports_temperature=False),
    "openai": ProviderPreset("openai", None, "OPENAI_API_KEY"),
    "google": ProviderPreset("google", None, "GEMINI_API_KEY"),
    "xai": ProviderPreset("openai", "https://api.x.ai/v1", "XAI_API_KEY"),
    "qwen": ProviderPreset("openai", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY"),
    "openrouter": ProviderPreset("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "together": ProviderPreset("openai", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "ollama": ProviderPreset("openai", "http://localhost:11434/v1", None),
    "vllm": ProviderPreset("openai", "http://localhost:8000/v1", None),
    "llamacpp": ProviderPreset("openai", "http://localhost:8080/v1", None),
    "openai_compatible": ProviderPreset("openai", None, None),
    "local": ProviderPreset("local", needs_model=False),
    "scripted": ProviderPreset("scripted", needs_model=False, supports_temperature=False),
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
    #: the model family for the same-family preference (ebtui.core.families: default the provider); not the
    #: client type
    family: str | None = Field(default=None, min_length=1)
    #: the provider-specific fields, typed by the provider's client kind (OPTIONS)
    options: SerializeAsAny[ProviderOptions] = Field(default_factory=ProviderOptions)
    source: Path | None = Field(default=None, exclude=True)  # the file it came from (None: built in)

    @model_validator(mode="before")
    @classmethod
    def _typed_options(cls, data: Any) -> Any:
        """`options` given as a table (or not at all) becomes the options model of the provider's kind."""
        if isinstance(data, dict) and data.get("provider") in PROVIDERS:
            kind = PROVIDERS[data["provider"]].options
            given = data.get("options")
            if not isinstance(given, kind):
                data = {**data, "options": kind.model_validate(given or {})}
        return data

    def options_as(self, kind: type[OptionsT]) -> OptionsT:
        """The options as the client of `kind` reads them (a client given another provider's model: TypeError)."""
        if not isinstance(self.options, kind):
            raise TypeError(f"model {self.name!r} (provider {self.provider!r}) has no {kind.__name__}")
        return self.options

    @property
    def extras(self) -> dict[str, Any]:
        """The provider-specific fields the file set, as a plain table (read-only; the typed form is `options`)."""
        return self.options.model_dump(exclude_unset=True)

    @property
    def preset(self) -> ProviderPreset:
        return PROVIDERS[self.provider]

    @property
    def client_type(self) -> str:
        """Which client implements the provider (every OpenAI-compatible preset is "openai")."""
        return self.preset.client

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
                          options=ScriptedOptions(latency_s=first, tokens_per_second=tps, seed=name))
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
    internal = ("name", "options", "extras", "source")
    if any(k in data for k in internal):
        bad = next(k for k in internal if k in data)
        raise ConfigError(_where(source, name, bad, "is not a settable field"))
    known = set(ModelConfig.model_fields) - set(internal)
    given = {k: data.pop(k) for k in list(data) if k not in known}
    for key in given:
        if key not in preset.options.model_fields:
            allowed = ", ".join(preset.options.model_fields) or "none"
            raise ConfigError(_where(source, name, key,
                                     f"unknown field for provider {provider!r} (its own fields: {allowed})"))
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
    try:
        options = preset.options.model_validate(given)
        return ModelConfig(name=name, options=options, source=source, **data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or None
        said = f"must be one of {err['ctx']['expected']}" if err["type"] == "literal_error" else err.get("msg")
        raise ConfigError(_where(source, name, field, f"{said} (got {err.get('input')!r})")) from None


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
    setting = load_settings().origin("models")
    if setting is not None:
        must_exist += 1
    for i, path in enumerate(candidates):
        if path.is_file():
            config = load_models_file(path)
            redact.register_env(m.key_env for m in config.models.values())  # see ebtui.redact
            return config
        if i < must_exist:
            origin = "--models" if explicit and i == 0 else setting
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
