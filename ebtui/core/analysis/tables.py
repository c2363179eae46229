"""The descriptive tables over a list of rounds: each reads the rounds' facts (ebtui.core.analysis.frame.Facts)
and hands them to ebtui.core.analysis.columnar, the one computation of these tables (the whole-store report
reads the same facts from their Parquet cache)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from ebtui.core.analysis import columnar
from ebtui.core.analysis.common import Table
from ebtui.core.analysis.consistency_rules import ConsistencyClassification
from ebtui.core.analysis.frame import Facts
from ebtui.core.records import Round

T = TypeVar("T")


def _over(rounds: Sequence[Round], table: Callable[[Facts, columnar.Exchanges], T]) -> T:
    facts = Facts.from_rounds(rounds)
    return table(facts, columnar.Exchanges.of(facts))


def model_comparison(rounds: Sequence[Round], *, effective: bool = True) -> Table:
    """Per model and role (presenting = Team A, responding = Team B), each criterion's mean, n and 95% interval
    (cluster bootstrap over dilemmas; blank below 3 dilemmas, with the reason)."""
    return _over(rounds, lambda f, ex: columnar.model_comparison(f, ex, effective=effective))


def dilemma_difficulty(rounds: Sequence[Round], *, effective: bool = True) -> Table:
    """Per dilemma: mean across models, spread between models (max-min and sd of model means), rank."""
    return _over(rounds, lambda f, ex: columnar.dilemma_difficulty(f, ex, effective=effective))


def cross_model(rounds: Sequence[Round], *, effective: bool = True) -> tuple[Table, Table]:
    """Team A model x Team B model: Team A's mean overall score, and how many exchanges each cell holds."""
    return _over(rounds, lambda f, ex: columnar.cross_model(f, ex, effective=effective))


def consistency_analysis(
    rounds: Sequence[Round],
    *,
    effective: bool = True,
    classifications: Mapping[str, ConsistencyClassification] | None = None,
) -> tuple[Table, Table]:
    """Per model (as Team A, who takes the test): the judges' consistency scores and each answer's class.

    `classifications` (exchange id -> classification, e.g. from a model classifier) replaces the rules for
    the answers it covers; every row names its classifier.
    """
    return _over(rounds, lambda f, ex: columnar.consistency_analysis(f, ex, effective=effective,
                                                                    classifications=classifications))


def framework_usage(rounds: Sequence[Round]) -> tuple[Table, Table]:
    """Per model and phase, how many answers mention each framework (documented lexicon), with quotes.

    Phase "judge_remarks" reads the judges' justifications about the model's team (one per judgment).
    Reads no scores, so it is the same in both views.
    """
    return _over(rounds, columnar.framework_usage)


def judge_agreement(rounds: Sequence[Round], **_ignored: object) -> tuple[Table, Table]:
    """Where several judges scored the same exchange: ICC, Krippendorff's alpha, pairwise correlations.

    Always on the judges' parsed scores: a human override is not a judge's opinion, so it never enters an
    agreement figure. Units are (exchange, team).
    """
    return _over(rounds, columnar.judge_agreement)


def analyse(
    rounds: Sequence[Round],
    *,
    effective: bool = True,
    classifications: Mapping[str, ConsistencyClassification] | None = None,
) -> list[Table]:
    """The descriptive score tables for one view (framework usage, which reads no scores, is separate; the
    joint fit's tables come from `analyse_fit`). Agreement tables always read the judges' parsed scores."""
    return _over(rounds, lambda f, ex: columnar.analyse(f, effective=effective, classifications=classifications,
                                                        ex=ex))
