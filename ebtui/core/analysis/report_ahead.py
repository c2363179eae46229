"""A report's independent pieces, computed ahead in a fork (analysis.ahead) while the report fits the rest: the
descriptive tables and, in a cold report, the as-judged preferences, the variance components
(precision.report_rows), the judge-bias section and with overrides the preferences in that view — each cached
one planned under the key its cached function computes (one the caches beside the columns hold is not)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ebtui.core.analysis.ahead import Piece, Plan, taken

if TYPE_CHECKING:
    from ebtui.core.analysis.bias_table import AgreementMap
    from ebtui.core.analysis.common import Table
    from ebtui.core.analysis.consistency_rules import ConsistencyClassification
    from ebtui.core.analysis.frame import Facts


#: the descriptive tables' piece: not a cache's entry, its key names the Facts object the fork was given
DESCRIPTIVE = "descriptive tables"
Descriptive = tuple["Table | None", list[tuple[bool, list["Table"]]], list["Table"]]


def descriptive_key(facts: Facts) -> str:
    """The descriptive tables' key: this Facts object (the fork has the same one, at the same address)."""
    return f"{id(facts)}|{len(facts)}"


def descriptive_tables(facts: Facts, *, seed: int, replicates: int,
                       classifications: Mapping[str, ConsistencyClassification] | None = None) -> Descriptive:
    """The report's tables that read the columns only (ebtui.core.analysis.columnar), as report.build_report_data
    adds them: judge vs human (None without overrides), each view's descriptive tables (as judged, then with
    the overrides where there are some), the framework usage."""
    from ebtui.core.analysis import columnar

    jvh = columnar.judge_vs_human(facts, seed=seed, replicates=replicates)
    ex = columnar.Exchanges.of(facts)
    views = [(effective, columnar.analyse(facts, effective=effective, classifications=classifications, ex=ex))
             for effective in ((False, True) if columnar.has_overrides(facts) else (False,))]
    return jvh, views, list(columnar.framework_usage(facts, ex))


def descriptive_of(facts: Facts, *, seed: int, replicates: int,
                   classifications: Mapping[str, ConsistencyClassification] | None = None) -> Descriptive:
    """`descriptive_tables`, taken from the fork computing them ahead when there is one (analysis.ahead)."""
    found, got = taken(DESCRIPTIVE, descriptive_key(facts)) if classifications is None else (False, None)
    return cast("Descriptive", got) if found else descriptive_tables(facts, seed=seed, replicates=replicates,
                                                                     classifications=classifications)


def report_pieces(facts: Facts, bias_rows: Facts, *, families: Mapping[str, str], agreement: AgreementMap | None,
                  seed: int, replicates: int, folder: Path | None, bias_key: str | None) -> list[Piece]:
    """What a report's fork computes ahead, about in the order the report needs them: the as-judged
    preferences (analysis.results), the variance components (precision.report_precision), the preferences with
    the overrides applied where there are overrides, the judge-bias section of `bias_rows`
    (bias_source.cached_section, under `bias_key`), the descriptive tables (`descriptive_tables`, never kept).
    Those the caches in `folder` hold are not planned (folder None: only the descriptive tables)."""
    # (the modules the pieces run, imported before the fork: once for both processes, a tenth of a second)
    from ebtui.core.analysis import columnar, judge_bias, precision, reliability, variance_cache  # noqa: F401

    descriptive: Piece = lambda: (DESCRIPTIVE, descriptive_key(facts),  # noqa: E731
                                  lambda: descriptive_tables(facts, seed=seed, replicates=replicates))
    if folder is None or bias_key is None:
        return [descriptive]
    out: list[Piece] = [lambda: _preferences(facts, families, False, seed, replicates, folder),
                        lambda: _components(facts, families, folder)]
    if columnar.has_overrides(facts):
        out.append(lambda: _preferences(facts, families, True, seed, replicates, folder))
    # the section, then the tables: the largest piece last (a piece the pipe cannot hold yet holds back those
    # after it, until this process asks for it)
    return [*out, lambda: _section(bias_rows, families, agreement, seed, replicates, folder, bias_key), descriptive]


def _held(path: Path, key: str) -> bool:
    from ebtui.core.analysis.common import read_entries

    return any(k == key for k, _ in read_entries(path))


def _preferences(facts: Facts, families: Mapping[str, str], effective: bool, seed: int, replicates: int,
                 folder: Path) -> Plan:
    from ebtui.core.analysis.bias_source import PREFERENCES_FILE, preferences_key, preferences_of_facts
    from ebtui.core.families import family_function

    key = preferences_key(facts, families=families, effective=effective, seed=seed, replicates=replicates)
    if _held(folder / PREFERENCES_FILE, key):
        return None
    return PREFERENCES_FILE, key, lambda: preferences_of_facts(facts, family_function(families), effective=effective,
                                                               seed=seed, replicates=replicates)


def _components(facts: Facts, families: Mapping[str, str], folder: Path) -> Plan:
    from ebtui.core.analysis.precision import report_rows
    from ebtui.core.analysis.variance import estimate_components
    from ebtui.core.analysis.variance_cache import CACHE_FILE, cache_key
    from ebtui.core.families import family_function

    rows, _all, reps = report_rows(facts, family_function(families))
    key = cache_key(rows, reps)
    if _held(folder / CACHE_FILE, key):
        return None
    return CACHE_FILE, key, lambda: estimate_components(rows, replicates=reps)


def _section(rows: Facts, families: Mapping[str, str], agreement: AgreementMap | None, seed: int, replicates: int,
             folder: Path, key: str) -> Plan:
    from ebtui.core.analysis.bias_source import SECTION_FILE, judge_bias_section_of_facts

    if _held(folder / SECTION_FILE, key):
        return None
    return SECTION_FILE, key, lambda: judge_bias_section_of_facts(rows, families=families, agreement=agreement,
                                                                  seed=seed, replicates=replicates)
