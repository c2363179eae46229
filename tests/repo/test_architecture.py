"""The layering rules, checked: the core never imports Textual; imports only go down the rooms of
docs/ARCHITECTURE.md's table (read from the document); no import cycles; no private names across modules."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import PKG


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


def _source(node: ast.ImportFrom, package: str) -> str:
    """The module a `from ... import` reads, relative imports resolved against `package`."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    return ".".join(base[: len(base) - (node.level - 1)] + ([node.module] if node.module else []))


def _all_imports(path: Path) -> set[str]:
    """Every module a file imports, relative imports resolved (function-level imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = _source(node, package)
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


MAX_DOCSTRING_LINES = 6


def _docstring_lines(text: str) -> int:
    """Lines of a module's docstring (as `ast.get_docstring` cleans it); 0 without one."""
    doc = ast.get_docstring(ast.parse(text))
    return len(doc.splitlines()) if doc else 0


def test_the_docstring_counter_counts_docstring_lines_only() -> None:
    assert _docstring_lines('"""One.\n\nTwo\nthree.\n"""\n\nX = """not\na\ndocstring"""\n') == 4
    assert _docstring_lines("X = 1\n") == 0


def test_every_module_docstring_says_what_the_module_is_for_in_a_few_lines() -> None:
    """Methods, formulas, file formats and rules belong in docs/*.md; history and figures in commits and
    benchmarks. A module docstring says what the module is for."""
    long = sorted(
        f"ebtui/{p.relative_to(PKG)}: {n} lines"
        for p in PKG.rglob("*.py")
        if (n := _docstring_lines(p.read_text(encoding="utf-8"))) > MAX_DOCSTRING_LINES
    )
    assert not long, (
        f"module docstrings over {MAX_DOCSTRING_LINES} lines (say what the module is for; move the details "
        "to docs/*.md or to the function they describe):\n" + "\n".join(long)
    )


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


def test_mypy_holds_the_whole_package_to_strict() -> None:
    import tomllib

    config = tomllib.loads((PKG.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert "ebtui" in config.get("files", []) or config.get("packages") == ["ebtui"]
    assert config.get("strict") is True
    relaxed = [o["module"] for o in config.get("overrides", []) if o.get("strict") is False
               or any(k.startswith(("allow_", "disallow_")) and v is (k.startswith("allow_"))
                      for k, v in o.items())]
    assert not relaxed, f"modules let off strict typing: {relaxed}"


# -- the module graph: every import of every module (function-level and TYPE_CHECKING ones included) -------------
def _modules() -> dict[str, Path]:
    return {_module(p): p for p in sorted(PKG.rglob("*.py"))}


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The ebtui module an imported name lives in: the longest module prefix of `name` (None: not ebtui)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(path: Path) -> set[str]:
    """The ebtui modules a file imports: `from pkg import mod` is mod, `from mod import name` is mod."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(_owner(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _source(node, package)
            for a in node.names:
                full = f"{source}.{a.name}"
                found.add(full if full in MODULES else _owner(source))
    return {t for t in found if t is not None and t != mod}


def _import_graph() -> dict[str, set[str]]:
    return {mod: _targets(path) for mod, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_circle_and_only_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"x": {"y"}, "y": set()}) == []


def test_no_import_cycles_in_ebtui() -> None:
    graph = _import_graph()
    circles = [" -> ".join(c) for c in _cycles(graph)]
    assert not circles, "import cycles (TYPE_CHECKING and function-level imports count):\n" + "\n".join(circles)


# -- no underscore-prefixed name imported from another module ----------------------------------------------------
#: packages let off the rule (none)
PRIVATE_EXEMPT: tuple[str, ...] = ()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_uses(path: Path) -> list[str]:
    mod = _module(path)
    return _private_uses_in(path.read_text(encoding="utf-8"), mod, path.name == "__init__.py")


def _private_uses_in(text: str, mod: str, is_package: bool) -> list[str]:
    """`from ebtui.x import _name`, `import ebtui.x._mod`, and `module._name` on an imported ebtui module."""
    package = mod if is_package else mod.rpartition(".")[0]
    tree = ast.parse(text)
    found: list[str] = []
    aliases: set[str] = set()  # local names bound to an ebtui module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("ebtui."):
                    if any(_private(part) for part in a.name.split(".")):
                        found.append(f"import {a.name}")
                    if a.asname:
                        aliases.add(a.asname)
        elif isinstance(node, ast.ImportFrom):
            source = _source(node, package)
            if not source.startswith("ebtui"):
                continue
            for a in node.names:
                full = f"{source}.{a.name}"
                if full in MODULES:
                    aliases.add(a.asname or a.name)
                if _private(a.name) and source != mod:
                    found.append(f"from {source} import {a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                and _private(node.attr):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_no_private_name_is_imported_from_another_module() -> None:
    problems = [
        f"{mod}: {use}"
        for mod, path in MODULES.items()
        if not mod.startswith(PRIVATE_EXEMPT)
        for use in _private_uses(path)
    ]
    assert not problems, "underscore-prefixed names used across modules (make them public):\n" + "\n".join(problems)


def test_the_private_name_finder_sees_each_form() -> None:
    text = ("from ebtui.core.records import _hidden, Round\nfrom ebtui.core import records as r\n"
            "import ebtui.core.store as st\nx = r._secret\ny = st.__name__\nfrom . import _near\n"
            "from ._own import helper\n")
    assert sorted(_private_uses_in(text, "ebtui.core.facts", False)) == sorted(
        ["from ebtui.core.records import _hidden", "r._secret", "from ebtui.core import _near"])


# -- docs/ARCHITECTURE.md's room table, read and enforced ------------------------------------------------------
ARCHITECTURE = PKG.parent / "docs" / "ARCHITECTURE.md"


def _dotted(path: str) -> str:
    """`ebtui/core/store/` or `ebtui/core/round.py` -> ebtui.core.store / ebtui.core.round."""
    name = path.strip().removesuffix("/").removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


Room = tuple[str, frozenset[str], frozenset[str]]  # (first path of the row, may import, never)
#: a row's package paths (`ebtui/core/store/`) hold every module below them; a file (`ebtui/core/round.py`,
#: `ebtui/core/__init__.py`) only itself
PACKAGE = "/"


def _room_table() -> dict[str, Room]:
    """Each path of the table's first column (dotted) -> its row: the backticked ebtui names of the last
    column, those before "never" allowed, those after it banned."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    rooms: dict[str, Room] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        allowed_text, _, banned_text = cells[2].partition("never")
        allowed = frozenset(n for n in re.findall(r"`([^`]+)`", allowed_text) if n == "ebtui" or n.startswith("ebtui."))
        banned = frozenset(n for n in re.findall(r"`([^`]+)`", banned_text) if n.startswith("ebtui"))
        raw = re.findall(r"`([^`]+)`", cells[0])
        paths = [_dotted(p) + (PACKAGE if p.endswith("/") else "") for p in raw]
        for path in paths:
            rooms[path] = (paths[0], allowed, banned)
    return rooms


def _room_of(module: str, rooms: dict[str, Room]) -> Room | None:
    """The row of the module's own file, else of the longest package path holding it."""
    if module in rooms:
        return rooms[module]
    best = None
    for path in rooms:
        package = path.removesuffix(PACKAGE)
        if path.endswith(PACKAGE) and (module == package or module.startswith(package + ".")) \
                and (best is None or len(path) > len(best)):
            best = path
    return rooms[best] if best is not None else None


def _covers(entry: str, module: str) -> bool:
    return module == entry or module.startswith(entry + ".")


def test_the_room_table_is_read() -> None:
    rooms = _room_table()
    assert {"ebtui.tui/", "ebtui.cli/", "ebtui.core.records", "ebtui.core.store/", "ebtui.providers/",
            "ebtui.config", "ebtui.core"} <= set(rooms)
    assert "ebtui.cli" in rooms["ebtui.tui/"][2] and "ebtui.config" in rooms["ebtui.providers/"][1]
    assert not rooms["ebtui.errors"][1] and rooms["ebtui.__main__"] == rooms["ebtui.launcher"]
    # a file's row holds that module only; a package's row everything below it
    assert _room_of("ebtui.core.somewhere_new", rooms) is None and _room_of("ebtui.nowhere", rooms) is None
    assert _room_of("ebtui.core.store.index", rooms) == rooms["ebtui.core.store/"]
    assert _room_of("ebtui.core", rooms) == rooms["ebtui.core"]


def test_every_module_has_a_room_in_the_table() -> None:
    rooms = _room_table()
    homeless = [m for m in MODULES if _room_of(m, rooms) is None]
    assert not homeless, f"modules in no room of {ARCHITECTURE.name}'s table (add a row): {', '.join(homeless)}"


def test_imports_follow_the_room_table() -> None:
    rooms = _room_table()
    problems = []
    for mod, targets in sorted(_import_graph().items()):
        room = _room_of(mod, rooms)
        if room is None:
            continue
        _, allowed, banned = room
        for target in sorted(targets):
            if _room_of(target, rooms) == room:
                continue
            if any(_covers(b, target) for b in banned) or not any(_covers(a, target) for a in allowed):
                problems.append(f"{mod} (room {room[0]}) imports {target}")
    assert not problems, f"imports the table in {ARCHITECTURE.name} does not allow:\n" + "\n".join(problems)


def test_every_allowed_import_in_the_table_is_used() -> None:
    """The table matches the code: an entry that no module of its room imports is stale."""
    rooms = _room_table()
    used: dict[str, set[str]] = {}
    for mod, targets in _import_graph().items():
        room = _room_of(mod, rooms)
        if room is not None:
            used.setdefault(room[0], set()).update(targets)
    stale = sorted({f"{first}: {entry}" for first, allowed, _ in rooms.values() for entry in allowed
                    if not any(_covers(entry, t) for t in used.get(first, set()))})
    assert not stale, f"{ARCHITECTURE.name} allows imports no module makes (drop them):\n" + "\n".join(stale)
