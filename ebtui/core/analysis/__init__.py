"""What tournament data says: the joint fit (judge-adjusted model means, judge offsets, same-family
preference) with cluster-bootstrap intervals, and the descriptive tables. Pure functions over rounds; no
front-end imports. See docs/STATISTICS.md for the model and its assumptions.

Modules: common (Table, Coverage, exchanges), fit (the joint OLS model, from per-dilemma sufficient
statistics), bootstrap (intervals), results (the tables and JSON every front end shows), tables (descriptive
tables), agreement (ICC, alpha, correlations), consistency (consistency answers, framework usage), families (a
model's family); at scale: frame (per-round facts `Facts`, the long score table `ScoreFrame`), columnar (the
report's tables from the facts), source (the facts kept in Parquet beside the store, `facts_source(store)`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ebtui.core.analysis.agreement import icc_2_1, judge_agreement
from ebtui.core.analysis.bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED, Interval, cluster_mean, interval
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
    coverage,
    exchange_key,
    exchanges,
    models_in,
    phase_text,
    team_scores,
    view_name,
)
from ebtui.core.analysis.consistency import (
    CLASSIFIER_SCHEMA,
    CLASSIFIER_SYSTEM,
    JUDGE_REMARKS,
    classifier_prompt,
    classify_consistency_answers_with_model,
    classify_consistency_with_model,
    consistency_analysis,
    framework_usage,
)
from ebtui.core.analysis.consistency_rules import TEAM_PHASES, ConsistencyClassification, classify_consistency
from ebtui.core.analysis.families import (
    FAMILY_PREFIXES,
    PROVIDER_FAMILY,
    family_function,
    model_family,
    resolve_families,
)
from ebtui.core.analysis.fit import JointFit, fit
from ebtui.core.analysis.results import (
    ADJUSTMENT_PARAGRAPH,
    Analysis,
    analyse_fit,
    has_overrides,
    judge_vs_human,
)
from ebtui.core.analysis.tables import cross_model, dilemma_difficulty, model_comparison
from ebtui.core.records import Round


def analyse(
    rounds: Sequence[Round],
    *,
    effective: bool = True,
    classifications: Mapping[str, ConsistencyClassification] | None = None,
    families: Mapping[str, str] | None = None,
) -> list[Table]:
    """The descriptive score tables for one view (framework usage, which reads no scores, is separate; the
    joint fit's tables come from `analyse_fit`). Agreement tables always read the judges' parsed scores."""
    del families
    return [
        model_comparison(rounds, effective=effective),
        dilemma_difficulty(rounds, effective=effective),
        *cross_model(rounds, effective=effective),
        *consistency_analysis(rounds, effective=effective, classifications=classifications),
        *judge_agreement(rounds),
    ]


__all__ = [
    "ADJUSTMENT_PARAGRAPH", "Analysis", "CLASSIFIER_SCHEMA", "CLASSIFIER_SYSTEM", "Cell", "ConsistencyClassification",
    "Coverage", "DEFAULT_REPLICATES", "DEFAULT_SEED", "Exchange", "FAMILY_PREFIXES", "Interval", "JUDGE_REMARKS",
    "JointFit", "OVERALL", "PROVIDER_FAMILY", "ROLES", "TEAM_PHASES", "Table", "VIEW_AS_JUDGED",
    "VIEW_BOTH", "VIEW_EFFECTIVE", "models_in", "analyse", "analyse_fit", "classifier_prompt", "classify_consistency",
    "classify_consistency_answers_with_model", "classify_consistency_with_model", "cluster_mean",
    "consistency_analysis", "coverage", "cross_model", "dilemma_difficulty", "exchange_key", "exchanges",
    "family_function", "fit", "framework_usage", "has_overrides", "icc_2_1", "interval", "judge_agreement",
    "judge_vs_human", "model_comparison", "model_family", "phase_text", "resolve_families",
    "team_scores", "view_name",
]
