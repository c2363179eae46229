"""How every figure is shown: one display rounding for the TUI, the CLI, the Markdown and HTML reports and
the SVG charts, that floating-point noise cannot flip (a mean on x.xx5 prints the same on every CPU).

`shown(x, spec)` takes the format spec an f-string would; `fixed`, `signed`, `sig`, `percent`, `usd` and
`rounded` are the forms the code uses. tests/repo/test_display_rounding.py keeps every module on it.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import SupportsFloat

__all__ = ["fixed", "percent", "rounded", "shown", "sig", "signed", "usd"]

# [[fill]align][sign][z][#][0][width][grouping][.precision][type] (Python's format mini-language)
_SPEC = re.compile(r"(?P<head>(?:.?[<>=^])?[-+ ]?z?#?0?\d*[,_]?)(?:\.(?P<prec>\d+))?(?P<type>[eEfFgG%]?)")
PRE_DECIMALS = 9  # the noise floor: digits beyond it never decide a shown figure
_LARGE = 1e15  # beyond it a float has no 9 decimals to round (and every shown digit is exact anyway)


def _half_up_fixed(x: float, decimals: int) -> float:
    d = Decimal(repr(round(x, max(PRE_DECIMALS, decimals + 3))))
    return float(d.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def _half_up_significant(x: float, digits: int) -> float:
    d = Decimal(f"{x:.{max(PRE_DECIMALS, digits + 3)}g}")
    with localcontext() as ctx:
        ctx.prec = digits
        ctx.rounding = ROUND_HALF_UP
        return float(+d)


def _number(x: object) -> float:
    """Anything with __float__ (float, int, numpy scalars); None or text is a caller's error, as in an f-string."""
    if isinstance(x, SupportsFloat):
        return float(x)
    raise TypeError(f"a figure to show must be a number, not {type(x).__name__}")


def rounded(x: object, decimals: int = 2) -> float:
    """`x` as shown with `decimals` decimals, as a number (a chart places this, so a mark and its printed
    figure agree): halves away from zero after the 9-decimal noise floor; zero is never -0.0."""
    x = _number(x)
    if not math.isfinite(x) or abs(x) >= _LARGE:
        return x
    v = _half_up_fixed(x, decimals)
    return 0.0 if v == 0 else v


def shown(x: object, spec: str = ".2f") -> str:
    """`format(x, spec)` (a float spec: type f, e, g or %), rounded stably: `x` is first rounded to 9 decimals
    (9 significant digits for e and g), then to the shown precision with halves away from zero, on the
    decimal value; so 0.875 - 1e-12 and 0.875 + 1e-12 both print 0.88. A value that rounds to zero prints
    without a minus sign; not-a-number and infinities print as Python prints them."""
    m = _SPEC.fullmatch(spec)
    if m is None or not m["type"]:
        raise ValueError(f"shown(): {spec!r} is not a float format spec (type f, e, g or %)")
    x = _number(x)
    if not math.isfinite(x) or abs(x) >= _LARGE:
        return format(x, spec)
    kind = m["type"]
    prec = int(m["prec"]) if m["prec"] is not None else 6
    if kind in "fF":
        v = _half_up_fixed(x, prec)
    elif kind == "%":
        v = _half_up_fixed(x * 100, prec) / 100
    elif kind in "eE":
        v = _half_up_significant(x, prec + 1)
    else:  # g, G: precision 0 is 1 significant digit
        v = _half_up_significant(x, max(prec, 1))
    return format(0.0 if v == 0 else v, spec)


def fixed(x: object, decimals: int = 2) -> str:
    """1.23"""
    return shown(x, f".{decimals}f")


def signed(x: object, decimals: int = 2) -> str:
    """+1.23 / -1.23 / +0.00"""
    return shown(x, f"+.{decimals}f")


def sig(x: object, digits: int = 3) -> str:
    """0.0123 (significant digits, as p-values are shown)"""
    return shown(x, f".{digits}g")


def percent(x: object, decimals: int = 0) -> str:
    """0.125 -> 13%"""
    return shown(x, f".{decimals}%")


def usd(x: object, decimals: int = 4) -> str:
    """$0.0123"""
    return "$" + shown(x, f".{decimals}f")
