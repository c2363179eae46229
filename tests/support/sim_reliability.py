"""Judgments from a planted reliability: one latent factor behind the seven criteria (known loadings, so a
known first-component share) and a judge scoring each transcript twice in one order (known retest noise, so a
known test-retest reliability). Used by tests/unit/analysis/test_reliability_recovery.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ebtui.core.records import CRITERIA, Judgment, Round
from tests.support.factories import planted_scores

ROUNDING = 1.0 / 12.0  # the variance integer rounding adds to a score (Sheppard)


@dataclass(frozen=True)
class RelTruth:
    loadings: Sequence[float] = (0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5)
    scale: float = 1.2  # sd of a criterion's score before rounding
    #: of the latent factor's variance: the share that is the transcript's (judged the same twice) — of which
    #: `dilemma_share` is the dilemma's, shared by every transcript of it — the rest is the judgment's own
    stable: float = 0.7
    dilemma_share: float = 0.2
    centre: float = 5.5

    def covariance(self) -> np.ndarray:
        """The criteria's covariance in one judgment (rounding included)."""
        lam = np.asarray(self.loadings)
        s2 = self.scale ** 2
        return s2 * np.outer(lam, lam) + np.diag(s2 * (1 - lam ** 2) + ROUNDING)

    def first_component_share(self) -> float:
        cov = self.covariance()
        sd = np.sqrt(np.diag(cov))
        eig = np.linalg.eigvalsh(cov / np.outer(sd, sd))
        return float(eig[-1] / eig.sum())

    def criterion_reliability(self, i: int) -> float:
        """The same for one criterion's score."""
        lam = float(self.loadings[i])
        return float(self.scale ** 2 * lam ** 2 * self.stable / (self.scale ** 2 + ROUNDING))

    def retest_reliability(self) -> float:
        """Of the mean-of-criteria's variance, the share two judgments of one transcript have in common."""
        lam = np.asarray(self.loadings)
        s2, k = self.scale ** 2, len(lam)
        common = s2 * lam.mean() ** 2
        unique = (s2 * float(np.sum(1 - lam ** 2)) + k * ROUNDING) / k ** 2
        return float(common * self.stable / (common + unique))


def _judgment(values: dict[str, np.ndarray], key: str, origin: str) -> Judgment:
    return Judgment(team_a_scores=planted_scores(values["a"]), team_b_scores=planted_scores(values["b"]),
                    judge_model="j", order="ab", key=key, origin=origin)


def generate(truth: RelTruth, *, dilemmas: int, exchanges: int = 6, seed: int = 0,
             repeated: float = 1.0) -> list[Round]:
    """`dilemmas` x `exchanges` rounds judged by "j", each judged a second time in the same order with
    probability `repeated` (a sparse retest design below 1)."""
    rng = np.random.default_rng(seed)
    lam = np.asarray(truth.loadings)
    s = truth.scale
    out: list[Round] = []
    for g in range(dilemmas):
        d_eff = rng.normal(0, np.sqrt(truth.stable * truth.dilemma_share))
        for e in range(exchanges):
            stable = {t: d_eff + rng.normal(0, np.sqrt(truth.stable * (1 - truth.dilemma_share))) for t in "ab"}

            def once() -> dict[str, np.ndarray]:
                vals = {}
                for t in "ab":  # noqa: B023 - called within the iteration that defines it
                    f = stable[t] + rng.normal(0, np.sqrt(1 - truth.stable))  # noqa: B023
                    vals[t] = truth.centre + s * (lam * f + np.sqrt(1 - lam ** 2) * rng.normal(size=len(CRITERIA)))
                return vals

            r = Round(id=f"r{g}-{e}", dilemma_id=f"d{g:02d}", team_a_model="m1", team_b_model="m2",
                      judge_model="j", exchange_id=f"x{g}-{e}")
            r.judgment = _judgment(once(), "first", "round")
            if rng.random() < repeated:
                r.extra_judgments = [_judgment(once(), "again", "rejudge")]
            out.append(r)
    return out
