"""Recovery and interval coverage of the judge-bias fit across seeds (planted length and formatting bias,
per-judge order and agreement bias; tests/support/judge_bias_sim.py). Prints one line per term: mean absolute error,
largest error, coverage of the 95% intervals. Usage: python benchmarks/bench_judge_bias_coverage.py [SEEDS] [--rotate]
(--rotate: one rotating judge per exchange with balanced orders, as `judge_order = "balanced"` plays it)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: its tests.support package

from ebtui.core.analysis.judge_bias import bias_json  # noqa: E402
from tests.support.judge_bias_sim import default_bias_truth, generate  # noqa: E402


def main(seeds: int = 40, rotate: bool = False) -> None:
    t0 = time.monotonic()
    hits: dict[str, list[bool]] = {}
    errs: dict[str, list[float]] = {}
    for seed in range(seeds):
        truth = default_bias_truth()
        if rotate:  # a tournament as played: one rotating judge per exchange, orders balanced, 2 per pairing
            rounds, agreement = generate(truth, seed=1000 + seed, both_orders=False, rotate=True, rounds_per_pairing=2)
        else:
            rounds, agreement = generate(truth, seed=1000 + seed, both_orders=seed % 2 == 0)
        out = bias_json(rounds, agreement=agreement, replicates=200, seed=seed)
        rows = [(c["term"], c, {"length": truth.words_beta, "format_density": truth.format_beta}[c["term"]])
                for c in out["style"]["coefficients"]]
        rows += [(f"order:{o['judge']}", o, truth.order[o["judge"]]) for o in out["order"]]
        rows += [(f"agree:{a['judge']}", a, truth.agree[a["judge"]]) for a in out["agreement_bias"]]
        want = truth.controlled()
        rows += [(f"model:{m['model']}", {**m, "estimate": m["adjusted_mean"]}, want[m["model"]])
                 for m in out["style"]["models"]]
        for name, row, value in rows:
            est = row.get("estimate", row.get("effect"))
            errs.setdefault(name, []).append(abs(est - value))
            hits.setdefault(name, []).append(row["ci_low"] is not None and row["ci_low"] <= value <= row["ci_high"])
    print(f"{seeds} seeds in {time.monotonic() - t0:.0f} s")
    print(f"{'term':<22} {'mean |err|':>10} {'max |err|':>10} {'coverage':>9}")
    for name in hits:
        print(f"{name:<22} {np.mean(errs[name]):>10.3f} {max(errs[name]):>10.3f} {np.mean(hits[name]):>9.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40, rotate="--rotate" in sys.argv)
