"""The human audit's calibration across simulated tournaments (tests/support/audit_sim.py: hidden human-scale
scores; judges with a constant severity, a liking for one model and noise). Prints per design: MAE of the
calibrated / human-only / judges-only model means against the human-scale fit, interval coverage and widths,
mean lambda, how often the judges-only interval misses the favoured model, and the judge biases' largest error and
coverage. Usage: python benchmarks/bench_audit_calibration.py [SEEDS] (the table of docs/STATISTICS.md)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: its tests.support package

from ebtui.core.audit.calibrate import calibrate  # noqa: E402
from ebtui.core.audit.draw import draw  # noqa: E402
from ebtui.core.audit.records import HumanRating  # noqa: E402
from ebtui.core.records import CRITERIA  # noqa: E402
from tests.support.audit_sim import AuditWorld, family_of, generate  # noqa: E402

UNBIASED: dict[str, Any] = {"severity": {"j1": 0.0, "j2": 0.0, "j3": 0.0}, "preference": 0.0}
DESIGNS: list[tuple[str, int, dict[str, Any]]] = [
    ("rotating judge, 6 dilemmas", 40, {}), ("rotating judge, 6 dilemmas", 20, {}),
    ("panel of 3", 40, {"panel": True}), ("4 dilemmas", 30, {"dilemmas": 4}),
    ("unbiased judges", 40, UNBIASED),
    ("unbiased judges, noise 0.3, human sd 1.0", 40, {**UNBIASED, "judge_noise": 0.3, "human_sd": 1.0}),
]


def one(name: str, n: int, kw: dict[str, Any], seeds: int) -> None:
    t0 = time.monotonic()
    w = AuditWorld(**kw)
    err: dict[str, list[float]] = {"ppi": [], "human": [], "judges": []}
    cover, width, width_h, lams, b_err, b_cov = [], [], [], [], [], []
    missed = 0
    for s in range(seeds):
        world = generate(w, s)
        a = draw(world.rounds, n, seed=s)
        a.ratings = [HumanRating(round_id=j.round_id, judgment_id=j.judgment_id, team=t, criterion=c,
                                 score=world.hidden[(j.round_id, j.judgment_id, t, c)])
                     for j in a.judgments for t in ("a", "b") for c in CRITERIA]
        cal = calibrate(world.rounds, [a], family_of, replicates=200)
        for m in cal.models:
            t_ = world.truth[m["model"]]
            err["ppi"].append(abs(m["mean"] - t_))
            err["human"].append(abs(m["human_only_mean"] - t_))
            err["judges"].append(abs(m["judge_only_mean"] - t_))
            cover.append(m["ci_low"] <= t_ <= m["ci_high"])
            width.append(m["ci_high"] - m["ci_low"])
            width_h.append(m["human_only_ci_high"] - m["human_only_ci_low"])
            lams.append(m["lambda"])
            if m["model"] == w.favoured and w.preference:
                missed += not m["judge_only_ci_low"] <= t_ <= m["judge_only_ci_high"]
        for j in cal.judges:
            b = world.bias[j["judge"]]
            b_err.append(abs(j["bias"] - b))
            b_cov.append(j["ci_low"] is not None and j["ci_low"] <= b <= j["ci_high"])
    print(f"{name}, {n} audited: MAE {np.mean(err['ppi']):.3f} / {np.mean(err['human']):.3f} / "
          f"{np.mean(err['judges']):.3f}; coverage {np.mean(cover):.3f}; width {np.mean(width):.2f} / "
          f"{np.mean(width_h):.2f}; lambda {np.mean(lams):.2f}; favoured missed by judges-only {missed}/{seeds}; "
          f"judge bias largest error {max(b_err):.3f}, coverage {np.mean(b_cov):.3f} ({time.monotonic() - t0:.0f} s)")


def main(seeds: int = 60) -> None:
    for name, n, kw in DESIGNS:
        one(name, n, kw, seeds)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
