"""Turning whatever an SDK raises into a ProviderError of the right kind."""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping
from typing import Any

from ebtui.providers.base import ErrorKind, ProviderError

_CONTEXT = re.compile(
    r"context[_ ]length|maximum context|context window|prompt is too long|too many tokens|input is too long"
    r"|exceeds the maximum number of tokens|token limit|context_length_exceeded|request_too_large",
    re.I,
)
# An exhausted quota (billing, a daily cap) is not a rate limit: waiting a few seconds will not fix it.
_QUOTA = re.compile(r"insufficient[_ ]quota|billing|check your plan|quota exceeded for .*per ?day|PerDay|credit", re.I)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `Retry-After` as seconds or an HTTP date."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def from_status(
    name: str, status: int, message: str, *, headers: Mapping[str, str] | None = None, code: str = ""
) -> ProviderError:
    text = f"{message} {code}".strip()
    retry_after = parse_retry_after(headers)
    msg = f"{name}: {message or 'HTTP ' + str(status)}"
    if status in (401, 403):
        return ProviderError("auth", msg + " (check the API key variable)", status=status)
    if status == 429:
        if _QUOTA.search(text):
            return ProviderError("quota", msg, status=status)
        return ProviderError("rate_limit", msg, status=status, retry_after=retry_after)
    if status == 413 or (400 <= status < 500 and _CONTEXT.search(text)):
        return ProviderError("context_overflow", msg, status=status)
    if status in (408, 409) or status >= 500:
        return ProviderError("server", msg, status=status, retry_after=retry_after)
    return ProviderError("bad_request", msg, status=status)


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def classify(name: str, exc: BaseException, *, streaming: bool) -> ProviderError:
    """Map an SDK or transport exception. `streaming`: the response had started arriving."""
    if isinstance(exc, ProviderError):
        return exc
    names = _class_names(exc)
    # openai / anthropic: APIStatusError(status_code, response, body)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and "APIStatusError" in names:
        response = getattr(exc, "response", None)
        headers = dict(response.headers) if response is not None else None
        message, code = _message_and_code(getattr(exc, "body", None), str(getattr(exc, "message", exc)))
        return from_status(name, status, message, headers=headers, code=code)
    # google-genai: APIError(code, details, response)
    google_code = getattr(exc, "code", None)
    if "APIError" in names and type(exc).__module__.startswith("google.genai") and isinstance(google_code, int):
        response = getattr(exc, "response", None)
        headers = dict(getattr(response, "headers", {}) or {}) if response is not None else None
        message = str(getattr(exc, "message", "") or exc)
        return from_status(name, google_code, message, headers=headers, code=str(getattr(exc, "status", "") or ""))
    if names & {"APITimeoutError", "TimeoutException", "ReadTimeout", "TimeoutError"}:
        return ProviderError("timeout", f"{name}: timed out waiting for the server ({type(exc).__name__})")
    if names & {"JSONDecodeError", "UnicodeDecodeError"}:
        return ProviderError("stream", f"{name}: corrupted chunk in the stream ({exc})")
    if names & {"RemoteProtocolError", "ReadError", "StreamError", "ProtocolError", "IncompleteRead"}:
        return ProviderError("stream" if streaming else "connection", f"{name}: connection dropped ({exc})")
    if names & {"APIConnectionError", "ConnectError", "TransportError", "NetworkError", "ConnectionError",
                "OSError"}:
        kind: ErrorKind = "stream" if streaming else "connection"
        return ProviderError(kind, f"{name}: connection failed ({type(exc).__name__}: {exc})")
    if "APIError" in names:  # an error event inside a stream (openai/anthropic) without a status
        message, code = _message_and_code(getattr(exc, "body", None), str(exc))
        if _CONTEXT.search(f"{message} {code}"):
            return ProviderError("context_overflow", f"{name}: {message}")
        return ProviderError("stream", f"{name}: error in the stream: {message}")
    return ProviderError("stream" if streaming else "connection",
                         f"{name}: unexpected {type(exc).__name__}: {exc}")


def _message_and_code(body: Any, fallback: str) -> tuple[str, str]:
    if isinstance(body, str | bytes):
        try:
            body = json.loads(body)
        except ValueError:
            return fallback, ""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            message = str(err.get("message") or fallback)
            code = " ".join(str(err[k]) for k in ("code", "type", "status") if err.get(k))
            return message, code
    return fallback, ""
