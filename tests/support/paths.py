"""Where the tests find the repository, their data and the shared fixtures beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "ebtui"
DATA = ROOT / "tests" / "data"
SHARED_FIXTURES = ROOT.parent / "shared" / "fixtures"
PUBLIC_DILEMMAS = SHARED_FIXTURES / "public_dilemmas_v2.docx"


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a Python child process that imports this checkout's `ebtui` and `tests.support`
    (the repository root first on PYTHONPATH), plus `extra`."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}
