"""The child process that runs the embedded model (`python -m ebtui.providers.local_worker`).

llama.cpp is native code: a crash (SIGSEGV, SIGABRT) here ends only this child, and the parent
(`ebtui.providers.local.LocalClient`) reports the call as a failed phase. It speaks JSON lines over
stdin/stdout (the protocol and the crash test hook: docs/PROVIDERS.md), exits when its stdin closes and
ignores SIGINT.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
from typing import Any

CRASH_ENV = "EBTUI_LOCAL_WORKER_CRASH"
LOAD_FAILED = 3  # exit code: the model could not be loaded (ebtui.providers.local.LOAD_FAILED)


def _crash(how: str) -> None:
    sys.stderr.write(f"ebtui local worker: crashing on purpose ({CRASH_ENV}={how})\n")
    sys.stderr.flush()
    if how == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    os.abort()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # fd 1 is the protocol; anything native code prints goes to stderr instead of corrupting it
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    write_lock = threading.Lock()

    def send(**msg: Any) -> None:
        with write_lock:
            proto.write(json.dumps(msg) + "\n")
            proto.flush()

    stdin = sys.stdin
    first = stdin.readline()
    if not first:
        return
    init = json.loads(first)
    crash = os.environ.get(CRASH_ENV, "")
    llm: Any = None
    if not crash:
        try:
            from llama_cpp import Llama

            kwargs: dict[str, Any] = {"model_path": init["model_path"], "n_ctx": init["n_ctx"], "verbose": False,
                                      "n_threads": init["n_threads"], "n_threads_batch": init["n_threads"]}
            if init.get("seed") is not None:
                kwargs["seed"] = init["seed"]
            llm = Llama(**kwargs)
        except Exception as exc:  # noqa: BLE001 - reported to the parent (stderr and the exit code)
            sys.stderr.write(f"could not load the model {init['model_path']}: {type(exc).__name__}: {exc}\n")
            sys.stderr.flush()
            sys.exit(LOAD_FAILED)
    send(t="ready")

    requests: queue.Queue[dict[str, Any] | None] = queue.Queue()
    cancelled: set[int] = set()
    cancel_lock = threading.Lock()

    def read_stdin() -> None:
        for line in stdin:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("op") == "cancel":
                with cancel_lock:
                    cancelled.add(int(msg["id"]))
            elif msg.get("op") == "generate":
                requests.put(msg)
        requests.put(None)  # the parent closed our stdin (or died): finish

    threading.Thread(target=read_stdin, daemon=True, name="ebtui-local-stdin").start()
    grammars: dict[str, Any] = {}
    while True:
        req = requests.get()
        if req is None:
            break
        if crash:
            _crash(crash)
        _serve(llm, req, send, cancelled, cancel_lock, grammars)
    if llm is not None:
        llm.close()


def _grammar(spec: dict[str, Any] | None, cache: dict[str, Any]) -> Any:
    if not spec:
        return None
    from llama_cpp.llama_grammar import LlamaGrammar

    from ebtui.providers.local import json_grammar_source, text_grammar

    key = json.dumps(spec, sort_keys=True)
    if key not in cache:
        source = text_grammar(int(spec["text"])) if "text" in spec else json_grammar_source(spec["json"])
        cache[key] = LlamaGrammar.from_string(source, verbose=False)
    return cache[key]


def _serve(llm: Any, req: dict[str, Any], send: Any, cancelled: set[int], lock: threading.Lock,
           grammars: dict[str, Any]) -> None:
    rid = int(req["id"])
    try:
        system, prompt, limit = req["system"], req["prompt"], int(req["limit"])
        # the template adds a few tokens per message; the text itself is what matters for the limit
        prompt_tokens = len(llm.tokenize(f"{system}\n{prompt}".encode(), add_bos=True)) + 16
        n_ctx = llm.n_ctx()
        if prompt_tokens + limit > n_ctx:
            send(t="error", id=rid, kind="context_overflow",
                 msg=f"prompt of about {prompt_tokens} tokens plus max_tokens={limit} exceeds n_ctx={n_ctx}")
            return
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        params = dict(req.get("params") or {})
        grammar = _grammar(req.get("grammar"), grammars)
        if grammar is not None:
            params["grammar"] = grammar
        parts: list[str] = []
        for chunk in llm.create_chat_completion(messages=messages, max_tokens=limit, stream=True, **params):
            with lock:
                if rid in cancelled:
                    cancelled.discard(rid)
                    break
            choice = chunk["choices"][0]
            text = choice.get("delta", {}).get("content")
            if text:
                parts.append(text)
                send(t="text", id=rid, v=text)
            if choice.get("finish_reason"):
                send(t="finish", id=rid, v=choice["finish_reason"])
        text = "".join(parts)
        out_tokens = len(llm.tokenize(text.encode(), add_bos=False)) if text else 0
        send(t="done", id=rid, prompt_tokens=prompt_tokens, output_tokens=out_tokens)
    except Exception as exc:  # noqa: BLE001 - a Python-level failure is reported; a native one kills us
        msg = f"{type(exc).__name__}: {exc}"
        kind = "context_overflow" if ("context window" in msg or "exceed" in msg) else "stream"
        send(t="error", id=rid, kind=kind, msg=f"llama.cpp failed: {msg}")


if __name__ == "__main__":
    main()
