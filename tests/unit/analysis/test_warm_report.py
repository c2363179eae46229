"""The warm report's faster paths give the same floats as what they replaced (issue #38: `report --json`
byte-identical): Krippendorff's alpha from the scored cells only against the `krippendorff` package."""

from __future__ import annotations

import warnings
from typing import Any

import krippendorff
import numpy as np
import pytest

from ebtui.core.analysis.agreement import average_ranks, krippendorff_interval, pearson, spearman


def _package(data: np.ndarray) -> float | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            a = float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
    except (ValueError, ZeroDivisionError):
        return None
    return None if np.isnan(a) else a


@pytest.mark.parametrize("kind", ["scores", "means", "fractions"])
def test_alpha_is_the_packages_to_the_last_bit(kind: str) -> None:
    rng = np.random.default_rng(38)
    for _ in range(25):
        J, N = int(rng.integers(2, 7)), int(rng.integers(1, 120))
        if kind == "scores":
            x = rng.integers(1, 11, size=(J, N)).astype(float)
        elif kind == "means":  # a judgment's mean of the criteria it gave: many distinct values
            x = rng.integers(7, 71, size=(J, N)) / 7
        else:  # a judge's mean over 1-6 judgments of one unit: units of 2-6 values (sums of thirds, fifths)
            x = rng.integers(1, 11, size=(J, N)) / rng.integers(1, 7, size=(J, N))
        x[rng.random((J, N)) < rng.uniform(0.0, 0.8)] = np.nan
        assert krippendorff_interval(x) == _package(x)


def test_alpha_blank_where_the_package_refuses() -> None:
    nan = np.nan
    one_value = np.array([[3.0, 3.0, nan], [3.0, nan, 3.0]])
    unpaired = np.array([[1.0, nan, 4.0], [nan, 2.0, nan]])  # no unit scored twice
    assert _package(one_value) is None and krippendorff_interval(one_value) is None
    assert _package(unpaired) is None and krippendorff_interval(unpaired) is None
    perfect = np.array([[1.0, 5.0, 9.0], [1.0, 5.0, 9.0]])
    assert krippendorff_interval(perfect) == _package(perfect) == 1.0
    opposed = np.array([[1.0, 9.0], [9.0, 1.0]])  # disagreement beyond chance: negative
    got = krippendorff_interval(opposed)
    assert got is not None and got < 0 and got == _package(opposed)


@pytest.mark.parametrize("kind", ["scores", "means", "continuous", "near_perfect"])
def test_correlations_are_scipy_stats_to_the_last_bit(kind: str) -> None:
    """The judges' pairwise correlations without importing scipy.stats: the same r, rho and p-values."""
    from scipy import stats

    rng = np.random.default_rng(38)
    checked = 0
    for _ in range(150):
        n = int(rng.integers(3, 300))
        if kind == "scores":  # whole scores: many ties
            x, y = rng.integers(1, 11, n).astype(float), rng.integers(1, 11, n).astype(float)
        elif kind == "means":  # a judge's mean over its judgments of a unit
            x = rng.integers(1, 11, n) / rng.integers(1, 4, n)
            y = np.round(x + rng.normal(0, 1.5, n))
        elif kind == "continuous":
            x = rng.normal(size=n)
            y = 0.6 * x + rng.normal(size=n)
        else:  # r near +-1 (the clip and the tails of the p-value)
            x = rng.normal(size=n)
            y = -x + rng.normal(0, 1e-9, n)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        pr, sr = stats.pearsonr(x, y), stats.spearmanr(x, y)
        assert pearson(x, y) == (float(pr.statistic), float(pr.pvalue))
        assert spearman(x, y) == (float(sr.statistic), float(sr.pvalue))
        checked += 1
    assert checked > 100


def test_average_ranks_are_rankdata_average() -> None:
    from scipy.stats import rankdata

    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 500):
        v = rng.integers(0, 6, n).astype(float)
        assert np.array_equal(average_ranks(v), rankdata(v))
    assert average_ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [3.5, 1.0, 3.5, 2.0]


@pytest.mark.parametrize("span", [50, 10**12])  # a table over the range, and the sort a wide range falls back to
def test_int_unique_gives_numpys_arrays(span: int) -> None:
    from ebtui.core.analysis.common import distinct_ints, int_unique

    rng = np.random.default_rng(7)
    for n in (0, 1, 5, 3000):
        key = rng.integers(-span, span, size=n)
        got = int_unique(key)
        want = np.unique(key, return_index=True, return_inverse=True)
        assert np.array_equal(distinct_ints(key), want[0]) and distinct_ints(key).dtype == np.int64
        for g, w in zip(got, want, strict=True):
            assert np.array_equal(g, w.reshape(-1))


def test_variance_rows_from_columns_are_the_rounds_rows_and_the_sample_the_same() -> None:
    """The report's variance rows built from the columns on the sampled keys only are the rows of the whole
    rounds, sampled by whole exchanges with the same rule (precision.sample_exchanges)."""
    from ebtui.core.analysis.frame import Facts
    from ebtui.core.analysis.precision import exchange_sample, sample_exchanges
    from ebtui.core.analysis.variance import judgment_rows, judgment_rows_of_facts
    from tests.support.sim_vc import generate, planted

    rounds = generate(planted(), dilemmas=6, judges="panel", seed=3)
    family = {"m1": "x", "m2": "x", "m3": "y", "m4": "z"}.__getitem__
    facts = Facts.from_rounds(rounds)
    whole = judgment_rows(rounds, family)
    assert judgment_rows_of_facts(facts, family) == whole
    limit = len(whole) // 3
    sampled = judgment_rows_of_facts(facts, family, sample=lambda keys: exchange_sample(keys, limit))
    assert sampled == sample_exchanges(whole, limit)
    assert 0 < len(sampled) < len(whole)
    # whole exchanges: every row of a chosen exchange is in, none of the others
    chosen = {r.exchange.rsplit("|", 1)[0] for r in sampled}
    assert [r for r in whole if r.exchange.rsplit("|", 1)[0] in chosen] == sampled


def test_variance_components_kept_beside_the_columns_read_back_the_same(tmp_path: Any, monkeypatch: Any) -> None:
    """A warm report reads its variance components back (variance_cache.CACHE_FILE) instead of refitting: the
    same object as a fresh fit, bit for bit; other rows, or a damaged file: a fresh fit."""
    import json

    from ebtui.core.analysis import variance_cache as vc
    from ebtui.core.analysis.variance import estimate_components, judgment_rows
    from tests.support.sim_vc import generate, planted

    rows = judgment_rows(generate(planted(), dilemmas=4, judges="panel", seed=4), lambda m: m)
    fresh = estimate_components(rows, replicates=0)
    first = vc.estimate_components_cached(rows, replicates=0, cache=tmp_path)
    assert first == fresh and (tmp_path / vc.CACHE_FILE).is_file()
    calls: list[int] = []

    def counted(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return estimate_components(*args, **kw)

    monkeypatch.setattr(vc, "estimate_components", counted)
    again = vc.estimate_components_cached(rows, replicates=0, cache=tmp_path)
    assert again == fresh and again.json() == fresh.json() and not calls  # read back, not refitted
    fewer = rows[: len(rows) // 2]
    assert vc.estimate_components_cached(fewer, replicates=0, cache=tmp_path) == estimate_components(fewer, replicates=0)
    assert len(calls) == 1  # other rows: refitted
    (tmp_path / vc.CACHE_FILE).write_text("{not json", encoding="utf-8")
    assert vc.estimate_components_cached(rows, replicates=0, cache=tmp_path) == fresh and len(calls) == 2
    for k in range(vc.CACHE_ENTRIES + 3):  # the file keeps the newest few
        vc.estimate_components_cached(rows[k:], replicates=0, cache=tmp_path)
    held = json.loads((tmp_path / vc.CACHE_FILE).read_text(encoding="utf-8"))["entries"]
    assert len(held) == vc.CACHE_ENTRIES


def test_the_collector_is_paused_only_while_a_report_is_computed() -> None:
    import gc

    from ebtui.core.usecases.report import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: still off, and the outer one turns it back on
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), gc_paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()


def _cells(rng: np.random.Generator, kind: str, n: int) -> list[Any]:
    weird = ["", "plain", 'quote " and \\ back', "tab\tnew\nline\r", "\x00\x1f ctrl", "é ü “curly” … \u2028 \U0001f600",
             "100%s %d %%", "{not: json}"]
    if kind == "str":
        return [weird[int(i)] for i in rng.integers(0, len(weird), n)]
    if kind == "float":
        return [float(v) for v in rng.normal(0, 10.0 ** float(rng.integers(-8, 9)), n)]
    if kind == "int":
        return [int(v) for v in rng.integers(-10**12, 10**12, n)]
    pool: list[Any] = [None, True, False, 0, -7, 2**70, 0.1, -0.0, 1e300, 5e-324, float("nan"), float("inf"),
                       -float("inf"), np.float64(2.5), np.float64("nan"), "x", weird[5], [1.5, float("nan"), "y"],
                       {"k": float("inf"), "j": [None]}]
    return [pool[int(i)] for i in rng.integers(0, len(pool), n)]


def test_the_tables_json_text_is_json_dumps_of_the_cleaned_dicts() -> None:
    """`report --json` writes each table's rows at once (report.rows_json / dumps_json): the same bytes as
    json.dumps(finite(...)) of the dicts, whatever the cells hold (NaN and inf as null, nested values, text
    that needs escaping, a '%' in a column name)."""
    import json

    from ebtui.core.analysis.common import Table
    from ebtui.core.analysis.compare import finite
    from ebtui.core.report import RowsJSON, dumps_json, rows_json

    def want(value: Any) -> str:
        return json.dumps(finite(value), ensure_ascii=False, allow_nan=False)

    rng = np.random.default_rng(38)
    kinds = ["str", "float", "int", "mixed"]
    for n in (0, 1, 2, 50):
        for _ in range(20):
            cols = ["model", "100% sure", "évidence \"q\"", "n"][: int(rng.integers(1, 5))]
            by_col = [_cells(rng, kinds[int(rng.integers(0, 4))], n) for _ in cols]
            t = Table("t", "T", cols, [list(r) for r in zip(*by_col, strict=True)] if n else [])
            assert rows_json(t) == want(t.as_dicts())
            obj = {"filters": {"model": None}, "t": RowsJSON(t), "nested": {"u": RowsJSON(t), "x": float("nan")},
                   "list": [1.0, float("inf")], "empty": {}}
            assert dumps_json(obj) == want({**obj, "t": t.as_dicts(), "nested": {"u": t.as_dicts(), "x": None}})
    ragged = Table("t", "T", ["a", "b"], [[1, 2], [3]])
    with pytest.raises(ValueError):
        rows_json(ragged)
    twice = Table("t", "T", ["a", "a"], [[1, 2]])
    assert rows_json(twice) == want(twice.as_dicts()) == '[{"a": 2}]'


def test_levels_are_numpys_unique_of_the_text() -> None:
    """frame.levels sorts a few repeated names by hashing: the same names and codes as np.unique of the values
    as numpy text (code point order, a trailing NUL as numpy treats it), many distinct values or few."""
    from ebtui.core.analysis.frame import levels

    def numpy_way(values: Any) -> tuple[list[str], np.ndarray]:
        names, inv = np.unique(np.asarray(values).astype(str), return_inverse=True)
        return [str(n) for n in names], inv.astype(np.int64)

    rng = np.random.default_rng(11)
    pool = ["b", "a", "é", "Z", "a b", "a\x1fb", "\U0001f600", "", "x" * 40, "ab", "a\x00b", "q\x00"]
    for n in (0, 1, 2, 30, 3000):
        for _ in range(10):
            v = [pool[int(i)] for i in rng.integers(0, len(pool), n)]
            for arg in (v, np.array(v, dtype=object)):
                got, want = levels(arg), numpy_way(arg)
                assert got[0] == want[0] and np.array_equal(got[1], want[1]) and got[1].dtype == np.int64
    many = np.array([f"x-{i:05d}" for i in rng.permutation(5000)], dtype=object)
    got, want = levels(many), numpy_way(many)
    assert got[0] == want[0] and np.array_equal(got[1], want[1])


def test_used_codes_are_int_uniques() -> None:
    """frame.used_codes (the levels a score table uses, a score per row): np.unique's names and inverse."""
    from ebtui.core.analysis.common import int_unique
    from ebtui.core.analysis.frame import used_codes

    rng = np.random.default_rng(3)
    for _ in range(100):
        k = int(rng.integers(1, 30))
        names = [f"n{i}" for i in range(k)]
        code = rng.integers(0, k, int(rng.integers(1, 300)))
        rows = rng.integers(0, len(code), int(rng.integers(1, 1000)))
        got = used_codes((names, code), rows)
        uniq, _, inv = int_unique(code[rows])
        assert got[0] == [names[u] for u in uniq.tolist()]
        assert np.array_equal(got[1], inv) and got[1].dtype == np.int64


def test_crossed_coefficients_are_the_add_at_sums_to_the_bit() -> None:
    """standard.crossed_coefficients sums a column at a time (bincount): np.add.at's floats, bit for bit."""
    from ebtui.core.analysis.standard import crossed_coefficients

    def with_add_at(r: np.ndarray, g: np.ndarray, G: int, j: np.ndarray, m: np.ndarray, M: int) -> dict[str, bytes]:
        out = {}
        for name, lev in (("judge", j), ("judge_model", j * M + m)):
            nl = int(lev.max()) + 1 if len(lev) else 0
            S = np.zeros((nl, r.shape[1]))
            np.add.at(S, lev, r)
            a = np.zeros((nl * G, r.shape[1]))
            np.add.at(a, lev * G + g, r)
            part = (np.sum(S ** 2, axis=0) - np.sum(a ** 2, axis=0)) * (G / (G - 1) if G > 1 else 1.0)
            out[name] = np.maximum(part, 0.0).tobytes()
        return out

    rng = np.random.default_rng(4)
    for _ in range(40):
        n, P, G, J, M = (int(rng.integers(lo, hi)) for lo, hi in ((1, 2000), (1, 12), (1, 15), (1, 8), (1, 8)))
        r = rng.normal(size=(n, P)) * 10.0 ** float(rng.integers(-5, 5))
        g, j, m = rng.integers(0, G, n), rng.integers(0, J, n), rng.integers(0, M, n)
        got = crossed_coefficients(r, g, G, j, m, M)
        assert {k: v.tobytes() for k, v in got.items()} == with_add_at(r, g, G, j, m, M)
