"""Every figure ebtui prints goes through ebtui/core/views/numbers.py (one display rounding that floating-point
noise cannot flip): no module formats a float with a raw format spec (`f"{x:.2f}"`, `"{:.3g}".format`,
`"%.1f" %`), and the front ends and reports do not round for display with `round(x, n)`."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import PKG

NUMBERS = PKG / "core" / "views" / "numbers.py"
# providers sit below core (they cannot import it) and print no statistic: seconds in retry messages
EXEMPT_DIRS = (PKG / "providers",)
FRONT_ENDS = (PKG / "tui", PKG / "cli", PKG / "api.py", PKG / "core" / "report.py", PKG / "core" / "export")

FLOAT_TYPE = re.compile(r"[eEfFgG%]$")
TEMPLATE = re.compile(r"\{[\w.\[\]]*:(.?[<>^=])?[-+ ]?z?#?0?\d*[,_]?(\.\d+)?[eEfFgG%]\}")
PERCENT = re.compile(r"%[-+ 0#]*\d*(\.\d+)?[eEfFgG]")
LOG_METHODS = {"debug", "info", "warning", "error", "exception", "critical", "log"}


def modules() -> Iterator[Path]:
    for path in sorted(PKG.rglob("*.py")):
        if path != NUMBERS and not any(path.is_relative_to(d) for d in EXEMPT_DIRS):
            yield path


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def raw_float_formats(source: str) -> list[tuple[int, str]]:
    """(line, what) for every float formatted without numbers.py in `source`."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue) and isinstance(node.format_spec, ast.JoinedStr):
            spec = "".join(v.value for v in node.format_spec.values
                           if isinstance(v, ast.Constant) and isinstance(v.value, str))
            if FLOAT_TYPE.search(spec):
                found.append((node.lineno, f"f-string spec {spec!r}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if m := TEMPLATE.search(node.value):
                found.append((node.lineno, f"format template {m.group(0)!r}"))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
                and isinstance(node.left.value, str) and (m := PERCENT.search(node.left.value)):
            found.append((node.lineno, f"%-format {m.group(0)!r}"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LOG_METHODS \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                and (m := PERCENT.search(node.args[0].value)):
            found.append((node.lineno, f"log format {m.group(0)!r}"))
    return sorted(found)


def test_the_checker_finds_each_way_of_formatting_a_float() -> None:
    planted = (
        'a = f"{x:.2f}"\n'
        'b = f"[{lo:+.2f}, {hi:>{w}.3g}]"\n'
        'c = "{:.1%}".format(share)\n'
        'd = "%.3f s" % secs\n'
        'log.warning("slow: %5.1f s", secs)\n'
        'e = f"{n:,}" + f"{name!r:>10}" + f"{n:d}" + "{0}".format(1) + "100%% done" % ()\n'  # not floats
        'css = "body{-webkit-text-size-adjust:100%}"; doc = "{criterion: effective score}"\n'
        'def f():\n    """A docstring may show `f"{x:.2f}"`."""\n'
    )
    assert [line for line, _ in raw_float_formats(planted)] == [1, 2, 2, 3, 4, 5]


def test_no_module_formats_a_float_itself() -> None:
    problems = [f"{path.relative_to(PKG.parent)}:{line}: {what} — use ebtui.core.views.numbers"
                for path in modules() for line, what in raw_float_formats(path.read_text(encoding="utf-8"))]
    assert not problems, "\n".join(problems)


def test_front_ends_do_not_round_for_display_with_round() -> None:
    """`round(x, 2)` rounds half to even on the binary value: 0.875 - 1e-12 and 0.875 + 1e-12 differ. The
    front ends and reports use numbers.rounded / numbers.shown (a bare round(x) for cell geometry is fine)."""
    problems = []
    for path in modules():
        if not any(path == f or path.is_relative_to(f) for f in FRONT_ENDS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "round" \
                    and len(node.args) + len(node.keywords) > 1:
                problems.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: round(x, n)")
    assert not problems, "\n".join(problems)
