"""The OpenAI client reads the server-sent events itself (the SDK still sends the request): the event parser
on its own, and an error event inside a stream over HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from ebtui.providers.openai_client import sse_json


async def _lines(*lines: str) -> AsyncIterator[str]:
    for line in lines:
        yield line


def _read(*lines: str) -> list[object]:
    async def go() -> list[object]:
        return [item async for item in sse_json(_lines(*lines))]
    return asyncio.run(go())


def test_events_are_the_json_of_their_data_lines_until_done() -> None:
    first, second = {"choices": [{"index": 0, "delta": {"content": "Hi"}}]}, {"usage": {"prompt_tokens": 3}}
    assert _read(
        ": a comment", "", "event: message", "id: 7", f"data: {json.dumps(first)}", "",
        f"data:{json.dumps(second)}", "",  # no space after the colon is the same field
        "data: [DONE]", "", "data: {\"after\": \"done\"}", "",
    ) == [first, second]


def test_data_lines_of_one_event_are_joined_and_a_last_event_without_its_blank_line_counts() -> None:
    assert _read('data: {"a":', 'data: 1}', "", 'data: {"b": 2}') == [{"a": 1}, {"b": 2}]
    assert _read("", "", "event: ping", "") == []


def test_a_corrupted_event_raises_rather_than_becoming_text() -> None:
    with pytest.raises(json.JSONDecodeError):
        _read('data: {"choices": [{"delta": {"content": "cut', "")


async def _serve_once(body: bytes) -> tuple[asyncio.Server, int]:
    """A one-answer HTTP server: whatever is asked, 200 and `body` as an event stream, then close."""
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next((int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")), 0)
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n" + body)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize(("error", "kind"), [
    ({"message": "The server had an error while processing your request.", "type": "server_error"}, "stream"),
    ({"message": "This model's maximum context length is 8192 tokens.", "code": "context_length_exceeded"},
     "context_overflow"),
])
def test_an_error_event_inside_the_stream_is_a_failed_call_not_text(monkeypatch, error: dict, kind: str) -> None:
    from ebtui.config import parse_model
    from ebtui.providers.base import Delta
    from ebtui.providers.errors import ProviderError
    from ebtui.providers.openai_client import OpenAIClient

    text = {"choices": [{"index": 0, "delta": {"content": "The case turns on"}}]}
    body = f"data: {json.dumps(text)}\n\ndata: {json.dumps({'error': error})}\n\n".encode()
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test")

    async def go() -> tuple[list[str], ProviderError | None]:
        server, port = await _serve_once(body)
        cfg = parse_model("sse", {"provider": "openai", "model": "gpt-4o-mini", "api_key_env": "EBTUI_TEST_KEY",
                                  "base_url": f"http://127.0.0.1:{port}/v1"}, None)
        client = OpenAIClient(cfg)
        seen: list[str] = []
        failure = None
        try:
            async for item in client.stream("prompt", "system"):
                if isinstance(item, Delta):
                    seen.append(item.text)
        except ProviderError as exc:
            failure = exc
        finally:
            await client.aclose()
            server.close()
        return seen, failure

    seen, failure = asyncio.run(go())
    assert seen == ["The case turns on"]  # streamed before the error: shown, then void
    assert failure is not None and failure.kind == kind
    assert error["message"] in str(failure)
    assert failure.partial_text == "The case turns on"
