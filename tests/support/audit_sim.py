"""Tournaments with a hidden human-scale score for every exchange x team x criterion, and judges who deviate
from it with a planted constant severity, a preference for one model and noise (issue #36's contract). The
human-scale truth is the joint fit over every judgment with the hidden scores in place of the judges'.
Used by tests/unit/analysis/test_audit_calibration.py and tests/cli/test_audit_cli.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ebtui.core.analysis.fit import fit
from ebtui.core.analysis.frame import Facts
from ebtui.core.analysis.judge_bias import expand_judgments
from ebtui.core.audit.calibrate import ref_of
from ebtui.core.audit.records import PRIMARY
from ebtui.core.records import CRITERIA, Round
from tests.support.factories import planted_scores, scored_round

MODELS = ("m1", "m2", "m3", "m4")
FAMILY = {m: f"fam-{m}" for m in (*MODELS, "j1", "j2", "j3")}


@dataclass
class AuditWorld:
    skill: dict[str, float] = field(default_factory=lambda: {"m1": 7.0, "m2": 6.5, "m3": 6.2, "m4": 5.8})
    severity: dict[str, float] = field(default_factory=lambda: {"j1": -0.8, "j2": 0.6, "j3": 0.0})
    favoured: str = "m3"
    preference: float = 1.0  # points every judge adds to the favoured model's scores
    judge_noise: float = 0.7  # per score
    human_sd: float = 0.6  # the exchange's own (per team x criterion) variation of the hidden score
    dilemma_sd: float = 0.4
    dilemmas: int = 6
    repeats: int = 2
    panel: bool = False  # every judge judges every exchange (else one rotating judge)


@dataclass
class World:
    rounds: list[Round]
    hidden: dict[tuple[str, str, str, str], int]  # (round id, judgment id, team, criterion) -> hidden score
    truth: dict[str, float]  # the human-scale adjusted means (the joint fit over all hidden scores)
    bias: dict[str, float]  # the planted constant bias of each judge


def generate(w: AuditWorld, seed: int) -> World:
    rng = np.random.default_rng(seed)
    models = sorted(w.skill)
    judges = sorted(w.severity)
    crit = rng.normal(0, 0.3, len(CRITERIA))
    crit -= crit.mean()
    rounds: list[Round] = []
    hidden: dict[tuple[str, str, str, str], int] = {}
    k = 0
    for d in range(w.dilemmas):
        dil = f"d{d + 1}"
        deff = rng.normal(0, w.dilemma_sd)
        for _rep in range(w.repeats):
            for a in models:
                for b in models:
                    if a == b:
                        continue
                    k += 1
                    h = {}
                    for team, m in (("a", a), ("b", b)):
                        h[team] = np.clip(np.rint(w.skill[m] + deff + crit + rng.normal(0, w.human_sd, 7)), 1, 10)
                    panel = judges if w.panel else [judges[k % len(judges)]]
                    for j in panel:
                        s = {}
                        for team, m in (("a", a), ("b", b)):
                            dev = w.severity[j] + (w.preference if m == w.favoured else 0.0)
                            s[team] = planted_scores(h[team] + dev + rng.normal(0, w.judge_noise, 7))
                        rid = f"r-{k:04d}-{j}"
                        rounds.append(scored_round(rid, dil, a, b, j, s["a"], s["b"], tournament_id="t-audit",
                                                   exchange_id=f"x{k:04d}"))
                        for team in ("a", "b"):
                            for c, v in zip(CRITERIA, h[team], strict=True):
                                hidden[(rid, PRIMARY, team, c)] = int(v)
    return World(rounds, hidden, human_truth(rounds, hidden), dict(w.severity))


def family_of(name: str) -> str:
    return FAMILY.get(name, name)


def human_truth(rounds: Sequence[Round], hidden: dict[tuple[str, str, str, str], int]) -> dict[str, float]:
    """The joint fit's adjusted means with every judge score replaced by the hidden human-scale score."""
    exp = expand_judgments(rounds)
    jf = fit(Facts.from_rounds(exp), family_of)
    assert jf is not None
    f = jf.design.frame
    refs = [ref_of(r) for r in exp]
    y = np.array([hidden[(*refs[int(f.round_idx[i])].split("#"), "a" if f.seat[i] > 0 else "b",
                          f.criteria[int(f.crit_idx[i])])] for i in range(len(f))], dtype=float)
    hf = fit(dataclasses.replace(f, y=y), family_of)
    assert hf is not None
    return dict(zip(hf.design.models, hf.estimates.adjusted.tolist(), strict=True))
