from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import PUBLIC_DILEMMAS, ROOT, subprocess_env

# One BLAS thread per process, set before numpy loads (nothing above imports it): the xdist workers already
# fill the cores, and each worker's OpenBLAS pool spinning on the tests' small matrices oversubscribed them
# (`ebtui report` and `ebtui plan` hold BLAS to one thread for the same reason). Workers and children inherit it.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


# Tests that must not share the machine with their own kind run in one pytest-xdist worker each group
# (`--dist loadgroup` in pyproject.toml): the SVG snapshots (rendering under load), the terminal tests in tmux
# (they read the screen against deadlines) and the local model (one model in memory at a time, its threads on
# the cores). The group is given here by file, so a new test in these files is grouped without a mark.
SERIAL_GROUPS: dict[str, tuple[str, ...]] = {
    "snapshots": ("tests/snapshots/",),
    "tmux": ("tests/tui/test_e2e_tmux.py", "tests/tui/test_tmux_contract.py", "tests/tui/test_audit_tmux.py",
             "tests/tui/test_setup_sizes.py"),
    "local_model": ("tests/providers/test_local_model.py", "tests/providers/test_local_worker_crash.py",
                    "tests/unit/core/test_local_round.py"),
}


#: `-n auto` starts this many workers per core (then --maxprocesses in pyproject.toml caps them: 4). Two workers
#: on two cores left a core idle much of the time: many tests wait — on a child `ebtui`, a paced scripted model,
#: llmock's delays, a tmux screen — and the default run measured 305-330 s of CPU where an idle run took ≈ 300 s
#: on two cores (load average 1-2; docs/BENCHMARKS.md). PYTEST_XDIST_AUTO_NUM_WORKERS still sets the number.
WORKERS_PER_CORE = 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores * WORKERS_PER_CORE)


def serial_group(item: pytest.Item) -> str | None:
    """The xdist group of a test: by its file (SERIAL_GROUPS), else `local_model` for a test so marked."""
    try:
        rel = item.path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    for group, prefixes in SERIAL_GROUPS.items():
        if rel.startswith(prefixes):
            return group
    return "local_model" if item.get_closest_marker("local_model") else None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the marks into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None and (group := serial_group(item)):
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True)
def _isolate_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's config or writes into ./saved; no real keys leak in."""
    monkeypatch.setenv("EBTUI_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))  # the app's first-screen cache among others
    # a child `python -m ebtui` runs this checkout's code, not whatever install the venv points at (the tests
    # are run from the checkout, but a child started in tmp_path would not find it on its path)
    monkeypatch.setenv("PYTHONPATH", subprocess_env()["PYTHONPATH"])
    monkeypatch.delenv("EBTUI_MODELS", raising=False)
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "XAI_API_KEY",
                "DASHSCOPE_API_KEY", "OPENROUTER_API_KEY", "TOGETHER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def public_dilemmas_path() -> Path:
    if not PUBLIC_DILEMMAS.exists():
        pytest.skip(f"shared fixture absent (a fresh clone has no ../shared beside it): {PUBLIC_DILEMMAS}")
    return PUBLIC_DILEMMAS


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    """Keys a test registered with the redactor (by loading a models.toml) do not redact the next test's text."""
    yield
    from ebtui import redact

    redact.forget_all()
