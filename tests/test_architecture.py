"""The layering rules, checked: the core never imports Textual; imports only go down."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "ebtui"


def test_core_imports_without_textual() -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        "import ebtui.core\n"
        "for m in pkgutil.walk_packages(ebtui.core.__path__, 'ebtui.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "import ebtui.providers\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout.strip()}"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


FORBIDDEN = {
    "core": ("textual", "rich", "ebtui.tui", "ebtui.cli"),
    "providers": ("textual", "rich", "ebtui.tui", "ebtui.cli", "ebtui.core"),
}


def test_imports_only_go_down() -> None:
    problems = []
    for layer, banned in FORBIDDEN.items():
        for path in (PKG / layer).rglob("*.py"):
            for name in _imports(path):
                if any(name == b or name.startswith(b + ".") for b in banned):
                    problems.append(f"{path.relative_to(PKG)} imports {name}")
    for name in _imports(PKG / "config.py") if (PKG / "config.py").exists() else set():
        if name.startswith(("ebtui.core", "ebtui.providers", "ebtui.tui", "ebtui.cli")):
            problems.append(f"config.py imports {name}")
    assert not problems, "\n".join(problems)


def test_headless_cli_does_not_import_textual() -> None:
    code = "import sys; import ebtui.cli; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _module(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _all_imports(path: Path) -> set[str]:
    """Every module a file imports, relative imports resolved (function-level imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names.add(mod)
            names.update(f"{mod}.{a.name}" for a in node.names)
    return names


def _violations(layer: str, banned: tuple[str, ...]) -> list[str]:
    out = []
    for path in sorted((PKG / layer).rglob("*.py")):
        for name in sorted(_all_imports(path)):
            if any(name == b or name.startswith(b + ".") for b in banned):
                out.append(f"{path.relative_to(PKG)} imports {name}")
    return out


def test_the_front_ends_never_import_each_other() -> None:
    problems = _violations("tui", ("ebtui.cli",)) + _violations("cli", ("ebtui.tui", "textual", "ebtui.launcher"))
    assert not problems, "\n".join(problems)


def test_core_imports_neither_textual_rich_nor_a_front_end() -> None:
    problems = _violations("core", ("textual", "rich", "ebtui.tui", "ebtui.cli", "ebtui.launcher"))
    assert not problems, "\n".join(problems)


def test_providers_import_nothing_of_core_or_the_front_ends() -> None:
    problems = _violations("providers", ("ebtui.core", "ebtui.tui", "ebtui.cli", "textual", "rich"))
    assert not problems, "\n".join(problems)


def test_the_launcher_only_reaches_the_tui_when_the_app_opens() -> None:
    code = "import sys, ebtui.launcher; print(any(n.startswith(('ebtui.tui', 'textual')) for n in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_store_and_tournament_are_packages() -> None:
    for name in ("store", "tournament"):
        assert (PKG / "core" / name / "__init__.py").is_file(), f"ebtui/core/{name}/ is not a package"
        assert not (PKG / "core" / f"{name}.py").exists(), f"ebtui/core/{name}.py still exists beside the package"
    for old in ("schedule.py", "tournament_config.py"):
        assert not (PKG / "core" / old).exists(), f"ebtui/core/{old} moved into ebtui/core/tournament/"


MAX_LINES = 600


def _sizes() -> list[tuple[str, int]]:
    return sorted(
        (str(p.relative_to(PKG)), sum(1 for _ in p.open(encoding="utf-8"))) for p in PKG.rglob("*.py")
    )


@pytest.mark.parametrize("rel", [rel for rel, _ in _sizes()])
def test_no_module_is_over_600_lines(rel: str) -> None:
    n = sum(1 for _ in (PKG / rel).open(encoding="utf-8"))
    assert n <= MAX_LINES, f"ebtui/{rel} has {n} lines (at most {MAX_LINES}): split it"


def test_mypy_is_clean_on_the_whole_package(tmp_path_factory: pytest.TempPathFactory) -> None:
    """`mypy ebtui` as CI runs it, with pyproject's [tool.mypy] (strict for ebtui.core and ebtui.providers)."""
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    # the repository's own cache (git-ignored) keeps a re-run to seconds; a read-only checkout gets a tmp one
    cache = PKG.parent / ".mypy_cache"
    if not _writable(PKG.parent):
        cache = tmp_path_factory.mktemp("mypy_cache")
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache), "ebtui"],
        capture_output=True, text=True, cwd=PKG.parent, timeout=600,
    )
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert out.returncode == 0 and not errors, out.stdout + out.stderr


def _writable(path: Path) -> bool:
    import os

    return os.access(path, os.W_OK)


def test_mypy_holds_the_core_and_providers_to_strict() -> None:
    import tomllib

    config = tomllib.loads((PKG.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert "ebtui" in config.get("files", []) or config.get("packages") == ["ebtui"]
    strict = {m for o in config.get("overrides", []) if o.get("strict") for m in o["module"]}
    assert {"ebtui.core.*", "ebtui.providers.*"} <= strict
