"""A small OpenAI-compatible chat server for fault tests: it counts every call it is sent (so a test can say
how many calls were started after something happened), and can answer with a 401 whose body echoes the key
it was sent, with a very long reply, or run a hook (fill a disk) when the Nth call arrives."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JUDGMENT = {
    "team_a": {"scores": {c: 7 for c in ("principle_articulation", "consistency", "stakeholder_recognition",
                                          "uncertainty_acknowledgment", "framework_awareness",
                                          "intellectual_honesty", "constructive_engagement")},
               "justification": "Clear and careful."},
    "team_b": {"scores": {c: 6 for c in ("principle_articulation", "consistency", "stakeholder_recognition",
                                          "uncertainty_acknowledgment", "framework_awareness",
                                          "intellectual_honesty", "constructive_engagement")},
               "justification": "Engaged but thinner."},
    "overall_analysis": "A close round.",
}


class FaultServer:
    def __init__(self, *, mode: str = "ok", reply_chars: int = 400, on_call: Callable[[int], None] | None = None,
                 chunk_chars: int = 65536, judge_chars: int | None = None) -> None:
        self.mode = mode
        self.reply_chars = reply_chars
        self.judge_chars = judge_chars  # the judge answers this many characters of prose instead of JSON
        self.chunk_chars = chunk_chars
        self.on_call = on_call
        self.calls: list[float] = []  # arrival time of each call (time.monotonic)
        self.keys_seen: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.calls.append(time.monotonic())
                    n = len(server.calls)
                    auth = self.headers.get("authorization", "")
                    server.keys_seen.append(auth.removeprefix("Bearer "))
                if server.on_call is not None:
                    server.on_call(n)
                if server.mode == "echo_401":
                    key = auth.removeprefix("Bearer ")
                    payload = json.dumps({"error": {
                        "message": f"Incorrect API key provided: {key}. You can find your API key at "
                                   f"https://example.invalid/keys (first part {key[:12]}, last part {key[-10:]}).",
                        "type": "invalid_request_error", "code": "invalid_api_key"}}).encode()
                    self.send_response(401)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.send_header("connection", "close")
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                is_judge = bool(body.get("response_format")) or "Your task: the judgment" in json.dumps(body)
                if is_judge and server.judge_chars:
                    text = self._text(n, server.judge_chars)
                else:
                    text = json.dumps(JUDGMENT) if is_judge else self._text(n)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for i in range(0, len(text), server.chunk_chars):
                        self._event({"choices": [{"index": 0, "delta": {"content": text[i:i + server.chunk_chars]}}]})
                    self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                    self._event({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 50}})
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (a reply cut at its cap)

            def _text(self, n: int, size: int | None = None) -> str:
                unit = f"Call {n}: the case turns on fidelity, autonomy and harm to third parties. "
                size = size or server.reply_chars
                return (unit * (size // len(unit) + 1))[:size]

            def _event(self, obj: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def models_toml(self, name: str = "fake", key_env: str = "EBTUI_FAKE_KEY", **extra: Any) -> str:
        lines = [f"[models.{name}]", 'provider = "openai"', 'model = "fake-model"', f'api_key_env = "{key_env}"',
                 f'base_url = "{self.base_url}"', "max_concurrency = 8"]
        lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
        return "\n".join(lines) + "\n"
