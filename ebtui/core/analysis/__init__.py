"""What tournament data says: the joint fit (judge-adjusted model means, judge offsets, same-family
preference) with cluster-bootstrap intervals, and the descriptive tables. Pure functions over rounds (or
their columnar facts); no front-end imports. See docs/STATISTICS.md for the model and its assumptions.
"""

from __future__ import annotations

from ebtui.core.analysis.agreement import icc_2_1
from ebtui.core.analysis.bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED, Interval, cluster_mean, interval
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
from ebtui.core.analysis.consistency_rules import TEAM_PHASES, ConsistencyClassification, classify_consistency
from ebtui.core.analysis.fit import JointFit, fit
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
