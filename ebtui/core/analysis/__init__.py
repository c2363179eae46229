"""What tournament data says: the joint fit (judge-adjusted model means, judge offsets, same-family
preference) with cluster-bootstrap intervals, and the descriptive tables. Pure functions over rounds (or
their columnar facts); no front-end imports. See docs/STATISTICS.md for the model and its assumptions.

The names are imported on first use (PEP 562): a process that reads only the analysis columns
(`ebtui.core.analysis.source`, a first build's worker) need not import the statistics (~0.17 s).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# (eager: `fit` is also a submodule's name, and importing the submodule later would bind the module over it)
from ebtui.core.analysis.fit import JointFit, fit

if TYPE_CHECKING:
    from ebtui.core.analysis.agreement import icc_2_1
    from ebtui.core.analysis.bootstrap import (
        DEFAULT_REPLICATES,
        DEFAULT_SEED,
        Interval,
        cluster_mean,
        interval,
    )
    from ebtui.core.analysis.columnar import JUDGE_REMARKS
    from ebtui.core.analysis.common import (
        OVERALL,
        ROLES,
        VIEW_AS_JUDGED,
        VIEW_BOTH,
        VIEW_EFFECTIVE,
        Cell,
        Coverage,
        Exchange,
        Table,
        exchange_key,
        exchanges,
        models_in,
        phase_text,
        view_name,
    )
    from ebtui.core.analysis.consistency import (
        CLASSIFIER_SCHEMA,
        CLASSIFIER_SYSTEM,
        classifier_prompt,
        classify_consistency_answers_with_model,
        classify_consistency_with_model,
    )
    from ebtui.core.analysis.consistency_rules import (
        TEAM_PHASES,
        ConsistencyClassification,
        classify_consistency,
    )
    from ebtui.core.analysis.results import (
        ADJUSTMENT_PARAGRAPH,
        Analysis,
        analyse_fit,
        has_overrides,
        judge_vs_human,
    )
    from ebtui.core.analysis.tables import (
        analyse,
        consistency_analysis,
        cross_model,
        dilemma_difficulty,
        framework_usage,
        judge_agreement,
        model_comparison,
    )
    from ebtui.core.families import (
        FAMILY_PREFIXES,
        PROVIDER_FAMILY,
        family_function,
        model_family,
        resolve_families,
    )

#: each name this package exports -> the module it comes from
_WHERE: dict[str, str] = {
    'ADJUSTMENT_PARAGRAPH': 'ebtui.core.analysis.results',
    'Analysis': 'ebtui.core.analysis.results',
    'CLASSIFIER_SCHEMA': 'ebtui.core.analysis.consistency',
    'CLASSIFIER_SYSTEM': 'ebtui.core.analysis.consistency',
    'Cell': 'ebtui.core.analysis.common',
    'ConsistencyClassification': 'ebtui.core.analysis.consistency_rules',
    'Coverage': 'ebtui.core.analysis.common',
    'DEFAULT_REPLICATES': 'ebtui.core.analysis.bootstrap',
    'DEFAULT_SEED': 'ebtui.core.analysis.bootstrap',
    'Exchange': 'ebtui.core.analysis.common',
    'FAMILY_PREFIXES': 'ebtui.core.families',
    'Interval': 'ebtui.core.analysis.bootstrap',
    'JUDGE_REMARKS': 'ebtui.core.analysis.columnar',
    'OVERALL': 'ebtui.core.analysis.common',
    'PROVIDER_FAMILY': 'ebtui.core.families',
    'ROLES': 'ebtui.core.analysis.common',
    'TEAM_PHASES': 'ebtui.core.analysis.consistency_rules',
    'Table': 'ebtui.core.analysis.common',
    'VIEW_AS_JUDGED': 'ebtui.core.analysis.common',
    'VIEW_BOTH': 'ebtui.core.analysis.common',
    'VIEW_EFFECTIVE': 'ebtui.core.analysis.common',
    'analyse': 'ebtui.core.analysis.tables',
    'analyse_fit': 'ebtui.core.analysis.results',
    'annotations': '__future__',
    'classifier_prompt': 'ebtui.core.analysis.consistency',
    'classify_consistency': 'ebtui.core.analysis.consistency_rules',
    'classify_consistency_answers_with_model': 'ebtui.core.analysis.consistency',
    'classify_consistency_with_model': 'ebtui.core.analysis.consistency',
    'cluster_mean': 'ebtui.core.analysis.bootstrap',
    'consistency_analysis': 'ebtui.core.analysis.tables',
    'cross_model': 'ebtui.core.analysis.tables',
    'dilemma_difficulty': 'ebtui.core.analysis.tables',
    'exchange_key': 'ebtui.core.analysis.common',
    'exchanges': 'ebtui.core.analysis.common',
    'family_function': 'ebtui.core.families',
    'framework_usage': 'ebtui.core.analysis.tables',
    'has_overrides': 'ebtui.core.analysis.results',
    'icc_2_1': 'ebtui.core.analysis.agreement',
    'interval': 'ebtui.core.analysis.bootstrap',
    'judge_agreement': 'ebtui.core.analysis.tables',
    'judge_vs_human': 'ebtui.core.analysis.results',
    'model_comparison': 'ebtui.core.analysis.tables',
    'model_family': 'ebtui.core.families',
    'models_in': 'ebtui.core.analysis.common',
    'phase_text': 'ebtui.core.analysis.common',
    'resolve_families': 'ebtui.core.families',
    'view_name': 'ebtui.core.analysis.common',
}



def import_all() -> None:
    """Import now every module the names come from (what importing the package did before they were lazy): for a
    caller with a moment to spare (`ebtui report` while a first build's workers read the round files)."""
    for where in dict.fromkeys(_WHERE.values()):
        importlib.import_module(where)


if not TYPE_CHECKING:  # (mypy reads the imports above; a module __getattr__ would make any name pass)

    def __getattr__(name: str) -> Any:
        """An exported name (imported on first use), else a submodule not imported yet."""
        where = _WHERE.get(name)
        if where is None:
            try:
                return importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError:
                raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(where), name)
        globals()[name] = value
        return value


__all__ = [
    "ADJUSTMENT_PARAGRAPH", "Analysis", "CLASSIFIER_SCHEMA", "CLASSIFIER_SYSTEM", "Cell", "ConsistencyClassification",
    "Coverage", "DEFAULT_REPLICATES", "DEFAULT_SEED", "Exchange", "FAMILY_PREFIXES", "Interval", "JUDGE_REMARKS",
    "JointFit", "OVERALL", "PROVIDER_FAMILY", "ROLES", "TEAM_PHASES", "Table", "VIEW_AS_JUDGED",
    "VIEW_BOTH", "VIEW_EFFECTIVE", "models_in", "analyse", "analyse_fit", "classifier_prompt", "classify_consistency",
    "classify_consistency_answers_with_model", "classify_consistency_with_model", "cluster_mean",
    "consistency_analysis", "cross_model", "dilemma_difficulty", "exchange_key", "exchanges",
    "family_function", "fit", "framework_usage", "has_overrides", "icc_2_1", "interval", "judge_agreement",
    "judge_vs_human", "model_comparison", "model_family", "phase_text", "resolve_families",
    "view_name",
]
