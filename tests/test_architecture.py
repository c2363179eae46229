"""The layering rules, checked: the core never imports Textual; imports only go down."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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
