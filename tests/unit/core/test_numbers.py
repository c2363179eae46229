"""The one display rounding (ebtui/core/views/numbers.py): a figure on a rounding boundary prints the same
whatever the last bits of its float, the halves go away from zero on the decimal value, and the text is
the one an f-string with the same spec prints for values away from boundaries."""

from __future__ import annotations

import math
import random
from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ebtui.core.views.numbers import fixed, percent, rounded, shown, sig, signed, usd

NOISE = 1e-12


def half_up(boundary: Decimal, decimals: int) -> str:
    """The right answer, computed on the exact decimal."""
    return str(boundary.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


@settings(max_examples=400, deadline=None)
@given(k=st.integers(min_value=-99_999, max_value=99_999), decimals=st.integers(min_value=0, max_value=4),
       eps=st.floats(min_value=-NOISE, max_value=NOISE))
def test_boundary_values_print_the_same_under_noise(k: int, decimals: int, eps: float) -> None:
    # k.5 units of the last shown decimal: exactly on the boundary as a decimal, a hair off as a float
    boundary = (Decimal(k) + Decimal("0.5")).scaleb(-decimals)
    x = float(boundary)
    want = half_up(boundary, decimals)
    assert shown(x + eps, f".{decimals}f") == want
    assert fixed(x - eps, decimals) == want
    assert signed(x + eps, decimals) == ("" if want.startswith("-") else "+") + want
    assert rounded(x + eps, decimals) == float(want)


@settings(max_examples=300, deadline=None)
@given(k=st.integers(min_value=100, max_value=999), exp=st.integers(min_value=-6, max_value=3),
       eps=st.floats(min_value=-1e-12, max_value=1e-12))
def test_significant_digit_boundaries_are_stable(k: int, exp: int, eps: float) -> None:
    boundary = (Decimal(k) + Decimal("0.5")).scaleb(exp)  # e.g. 123.5e-4: a 3-digit boundary
    x = float(boundary)
    want = format(float(Decimal(k + 1).scaleb(exp)), ".3g")
    assert sig(x * (1 + eps)) == want
    assert sig(x * (1 - eps)) == want


def test_means_summed_in_any_order_print_alike() -> None:
    """The failure this module exists for: a mean of integer scores on x.xx5, summed in another order (another
    CPU's vectorised sum), is a different float; the text must not change."""
    rng = random.Random(3)
    seen = 0
    for _ in range(2000):
        n = rng.choice([8, 40, 200])
        scores = [rng.randint(1, 10) / 3 for _ in range(n)]  # thirds: sums that are not exact in binary
        orders = [scores, sorted(scores), sorted(scores, reverse=True)]
        means = [math.fsum(o) / n for o in orders] + [sum(o) / n for o in orders]
        texts = {fixed(m) for m in means} | {signed(m - 5) for m in means}
        assert len({fixed(m) for m in means}) == 1, means
        assert len({signed(m - 5) for m in means}) == 1, means
        seen += len(set(means)) > 1 and len(texts) == 2
    assert seen > 100  # the orders did give different floats in many draws


@pytest.mark.parametrize(("x", "spec", "want"), [
    (0.875, ".2f", "0.88"), (-0.875, ".2f", "-0.88"), (2.675, ".2f", "2.68"), (0.125, "+.2f", "+0.13"),
    (-1e-13, "+.2f", "+0.00"), (-0.004, ".2f", "0.00"), (7.25, "5.1f", "  7.3"), (0.125, ".0%", "13%"),
    (0.0005, ".3f", "0.001"), (0.00012345, ".3g", "0.000123"), (12345678.0, ".3g", "1.23e+07"),
    (0.6665, ">12.0%", "         67%"), (1234.5, ",.0f", "1,235"), (3.0, "g", "3"),
])
def test_examples(x: float, spec: str, want: str) -> None:
    assert shown(x, spec) == want


@settings(max_examples=300, deadline=None)
@given(x=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
       spec=st.sampled_from([".2f", "+.2f", ".1f", "6.2f", ".4f", ".3g", ".0%", ".1%"]))
def test_same_text_as_python_away_from_boundaries(x: float, spec: str) -> None:
    """Where the value is not within the noise floor of a boundary, the text is exactly Python's."""
    plain = format(x, spec)
    if plain == format(math.nextafter(x, math.inf) * (1 + 1e-9), spec) == format(x * (1 - 1e-9) - 1e-9, spec) \
            and not plain.lstrip(" +-").strip("0.%") == "":
        assert shown(x, spec) == plain


def test_not_finite_and_large_values_as_python_prints_them() -> None:
    assert fixed(float("nan")) == "nan"
    assert signed(float("inf")) == "+inf"
    assert fixed(1e20) == format(1e20, ".2f")
    assert usd(0.12345) == "$0.1235"
    assert percent(0.5) == "50%"


def test_a_spec_that_is_not_a_float_format_is_refused() -> None:
    with pytest.raises(ValueError, match="not a float format spec"):
        shown(1.0, "d")
