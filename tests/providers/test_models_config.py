"""models.toml: discovery order, validation messages naming file/model/field, keys only from the env."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ebtui.config import ConfigError, default_model_name, load_models_config
from ebtui.providers.registry import build_client, build_clients

SECRET = "sk-live-THIS-MUST-NEVER-APPEAR-0123456789"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_builtins_exist_without_any_file() -> None:
    config = load_models_config()
    assert config.source is None
    assert {"local", "scripted"} <= set(config.models)
    assert config.models["local"].provider == "local"
    assert default_model_name(config) == "local"


def test_discovery_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd_file = write(tmp_path / "models.toml", '[models.a]\nprovider = "scripted"\n')
    assert load_models_config().source == cwd_file
    env_file = write(tmp_path / "env.toml", '[models.b]\nprovider = "scripted"\n')
    monkeypatch.setenv("EBTUI_MODELS", str(env_file))
    assert load_models_config().source == env_file
    explicit = write(tmp_path / "explicit.toml", '[models.c]\nprovider = "scripted"\n')
    config = load_models_config(explicit)
    assert config.source == explicit and "c" in config.models and "a" not in config.models


def test_user_config_dir_is_last(tmp_path: Path) -> None:
    user = tmp_path / "xdg-config" / "ebtui"
    user.mkdir(parents=True)
    path = write(user / "models.toml", '[models.u]\nprovider = "scripted"\n')
    assert load_models_config().source == path


def test_missing_explicit_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: models file not found \(from --models\)"):
        load_models_config(tmp_path / "nope.toml")
    monkeypatch.setenv("EBTUI_MODELS", str(tmp_path / "gone.toml"))
    with pytest.raises(ConfigError, match=r"gone\.toml: models file not found \(from EBTUI_MODELS\)"):
        load_models_config()


@pytest.mark.parametrize(
    ("body", "model", "field", "words"),
    [
        ('[models.x]\nprovider = "opnai"\nmodel = "m"\n', "x", "provider", "unknown provider 'opnai'"),
        ('[models.x]\nmodel = "m"\n', "x", "provider", "missing"),
        ('[models.x]\nprovider = "openai"\n', "x", "model", "needs a model name"),
        ('[models.x]\nprovider = "anthropic"\nmodel = "c"\ntemperature = 0.5\n', "x", "temperature",
         "does not take a temperature"),
        ('[models.x]\nprovider = "openai"\nmodel = "m"\nmax_tokens = -3\n', "x", "max_tokens", "greater than 0"),
        ('[models.x]\nprovider = "openai"\nmodel = "m"\nprice_in = "cheap"\n', "x", "price_in", "number"),
        ('[models.x]\nprovider = "openai"\nmodel = "m"\nmax_tokenz = 5\n', "x", "max_tokenz", "unknown field"),
        ('[models.x]\nprovider = "openai_compatible"\nmodel = "m"\n', "x", "base_url", "needs a base_url"),
        ('[models.x]\nprovider = "scripted"\njudge_mode = "weird"\n', "x", "judge_mode", "must be one of"),
        ('[models.x]\nprovider = "openai"\nmodel = "m"\napi_key = "sk-123"\n', "x", "api_key", "unknown field"),
    ],
)
def test_bad_values_name_file_model_and_field(tmp_path: Path, body: str, model: str, field: str,
                                              words: str) -> None:
    path = write(tmp_path / "models.toml", body)
    with pytest.raises(ConfigError) as info:
        load_models_config(path)
    message = str(info.value)
    assert str(path) in message and f"model {model!r}" in message and f"field {field!r}" in message
    assert words in message
    assert "\n" not in message


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "models.toml", "[models.x\nprovider=")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_models_config(path)


def test_presets_fill_base_url_and_key_variable(tmp_path: Path) -> None:
    path = write(tmp_path / "m.toml", "\n".join(
        f'[models.{p}]\nprovider = "{p}"\nmodel = "m"\n'
        for p in ("xai", "qwen", "openrouter", "together", "ollama", "vllm", "llamacpp")))
    models = load_models_config(path).models
    assert models["xai"].effective_base_url == "https://api.x.ai/v1" and models["xai"].key_env == "XAI_API_KEY"
    assert models["qwen"].effective_base_url == "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"
    assert models["qwen"].key_env == "DASHSCOPE_API_KEY"
    assert models["openrouter"].key_env == "OPENROUTER_API_KEY"
    assert models["together"].effective_base_url == "https://api.together.xyz/v1"
    assert models["ollama"].effective_base_url == "http://localhost:11434/v1" and models["ollama"].key_env is None
    assert models["vllm"].effective_base_url == "http://localhost:8000/v1"
    assert models["llamacpp"].effective_base_url == "http://localhost:8080/v1"


def test_missing_key_is_only_an_error_when_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "models.toml", '[models.claude]\nprovider = "anthropic"\nmodel = "c"\n')
    config = load_models_config(path)  # loading is fine
    assert not config.models["claude"].key_set
    assert default_model_name(config) == "local"
    with pytest.raises(ConfigError) as info:
        build_clients(config, ["claude"])
    assert str(path) in str(info.value) and "'api_key_env'" in str(info.value)
    assert "ANTHROPIC_API_KEY is not set" in str(info.value)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    assert default_model_name(config) == "claude"
    assert build_clients(config, ["claude"])["claude"].name == "claude"


def test_explicit_default(tmp_path: Path) -> None:
    path = write(tmp_path / "models.toml", 'default = "fast"\n[models.fast]\nprovider = "scripted"\n')
    assert default_model_name(load_models_config(path)) == "fast"


def test_keys_never_in_repr_dump_or_str(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    path = write(tmp_path / "models.toml", (
        '[models.o]\nprovider = "openai"\nmodel = "m"\n'
        '[models.a]\nprovider = "anthropic"\nmodel = "m"\n'
        '[models.g]\nprovider = "google"\nmodel = "m"\n'))
    config = load_models_config(path)
    texts = [repr(config), str(config), config.model_dump_json(), str(config.model_dump())]
    for name in ("o", "a", "g"):
        client = build_client(config.models[name])
        texts += [repr(client), str(client), repr(client.inner), str(vars(client))]
        asyncio.run(client.aclose())
    assert not [t for t in texts if SECRET in t]


def test_scripted_options_from_toml(tmp_path: Path) -> None:
    path = write(tmp_path / "models.toml", (
        '[models.s]\nprovider = "scripted"\nlatency_s = 0.01\ntokens_per_second = 500\n'
        'judge_mode = "prose"\nseed = "x"\n'
        '[[models.s.rules]]\nmatch = "hello"\nreply = "Scripted hello back."\n'))
    client = build_client(load_models_config(path).models["s"])
    completion = asyncio.run(client.generate("hello there", "sys"))
    assert completion.text == "Scripted hello back."
    judged = asyncio.run(client.generate("judge", "sys", json_schema={"type": "object"}))
    assert "{" not in judged.text  # prose judge mode: no JSON at all
    assert completion.first_token_s is not None and completion.first_token_s >= 0.01
