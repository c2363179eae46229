"""The shapes of the judge-bias part of `report --json` (`style`, `order`, `agreement_bias`, `judge_bias_fit`,
`reliability`, `judgments`): written by ebtui.core.analysis.judge_bias and .reliability, read back by
.bias_report."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class ExcludedJson(TypedDict):
    rounds: int
    judgments: int
    rounds_without_own_judgment: int
    scores_missing: int


class StyleCoefficient(TypedDict):
    term: str
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    unit: str
    mean: float
    sd: float
    n: int
    interval_note: str


class StyleModel(TypedDict):
    model: str
    raw_mean: float
    mean_without_style: float | None  # None: the design does not identify it
    adjusted_mean: float | None
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n_scores: int
    interval_note: str


class StyleJson(TypedDict):
    """`style` (without a fit: no coefficient or model, and a `note` instead of `excluded` and `notes`)."""

    coefficients: list[StyleCoefficient]
    models: list[StyleModel]
    n_scores: int
    excluded: NotRequired[ExcludedJson]
    notes: NotRequired[list[str]]
    note: NotRequired[str]


class FlipRate(TypedDict):
    flip_rate: float | None
    flip_ci_low: float | None
    flip_ci_high: float | None
    flip_pairs: int
    flip_exchanges: int
    flip_note: str


class OrderRow(TypedDict):
    judge: str
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    flip_rate: float | None
    flip_ci_low: float | None
    flip_ci_high: float | None
    flip_pairs: int
    n: int
    n_ab: int
    n_ba: int
    interval_note: str


class AgreementRow(TypedDict):
    judge: str
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_scores: int
    n_agree_scores: int
    interval_note: str


class PreferenceRow(TypedDict):
    """`self_and_family[]`: the self-preference (a judge scoring its own model's team) or the same-family
    preference (a model of the judge's family, not itself)."""

    term: str  # "self" or "same_family"
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n: int  # the (judge, model) pairs it rests on
    pairs: list[str]  # "judge -> model"
    n_scores: int
    interval_note: str


class BiasFitInfo(TypedDict):
    """`judge_bias_fit` (without a fit: `n_scores` 0 and a `note` only)."""

    n_scores: int
    judgments: NotRequired[int]
    dilemmas: NotRequired[int]
    models: NotRequired[int]
    judges: NotRequired[int]
    terms: NotRequired[list[str]]
    full_rank: NotRequired[bool]
    replicates_used: NotRequired[int]
    #: the judge x model variance component every interval of the fit includes (sd in score points)
    judge_model_sd: NotRequired[float | None]
    judge_model_df: NotRequired[int]
    judge_model_pairs: NotRequired[int]
    excluded: NotRequired[ExcludedJson]
    notes: NotRequired[list[str]]
    note: NotRequired[str]


class BiasJson(TypedDict):
    """What ebtui.core.analysis.judge_bias.bias_json gives."""

    style: StyleJson
    order: list[OrderRow]
    agreement_bias: list[AgreementRow]
    self_and_family: list[PreferenceRow]
    judge_bias_fit: BiasFitInfo


class AlphaRow(TypedDict):
    criterion: str
    alpha: float | None
    ci_low: float | None
    ci_high: float | None
    n_units: int
    n_values: int
    n_units_left_out: int
    interval_note: str


class RetestRow(TypedDict):
    judge: str
    alpha_mean_of_criteria: float | None
    ci_low: float | None
    ci_high: float | None
    mean_abs_diff: float | None
    exact_agreement: float | None
    n: int
    n_score_pairs: int
    interval_note: str


class CorrelationsJson(TypedDict):
    criteria: list[str]
    matrix: list[list[float | None]]


class ReliabilityJson(TypedDict):
    """What ebtui.core.analysis.reliability.reliability_json gives."""

    alpha_by_criterion: dict[str, AlphaRow]
    alpha_level: str
    test_retest: list[RetestRow]
    criteria_first_component_share: float | None
    criteria_correlations: CorrelationsJson
    n_judgment_teams: int
    n_complete: int
    note: str


class BiasSection(BiasJson):
    """The whole section (ebtui.core.analysis.bias_report.judge_bias_section)."""

    reliability: ReliabilityJson
    judgments: dict[str, int]
