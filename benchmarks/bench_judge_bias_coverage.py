"""Recovery and interval coverage of the judge-bias fit across seeds (planted length and formatting bias,
per-judge order and agreement bias; tests/support/judge_bias_sim.py). Prints one line per term: mean absolute error,
largest error, coverage of the 95% intervals. Usage: python benchmarks/bench_judge_bias_coverage.py [SEEDS] [--rotate]
(--rotate: one rotating judge per exchange with balanced orders, as `judge_order = "balanced"` plays it).
--panel: issue 35's design (tests/support/judge_bias_sim.panel_truth: 5 models, 4 rotating judges, 8 dilemmas,
each (judge, model) pair with its own liking of sd 0.25): the same-family interval's coverage of 0 (and the
dilemma-only interval's, for comparison), the self-preference recovered when models judge their own rounds, the
judge x model sd recovered, and the style-controlled means under a relative-length and an own-length bias.
--oracle: the style contract against an oracle knowing the style coefficient; --section2: section 2's
family_preference with models judging their own rounds (docs/STATISTICS.md has the measured numbers)."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: its tests.support package

from ebtui.core.analysis.judge_bias import bias_fit, bias_json  # noqa: E402
from tests.support.judge_bias_sim import default_bias_truth, generate, panel_truth  # noqa: E402


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
        rows = [(c["term"], c, {"length": truth.words_beta, "format_density": truth.format_beta,
                                "length_relative": truth.relative_words_beta, "format_relative": 0.0}[c["term"]])
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


def _covers(row: Mapping[str, Any], value: float) -> bool:
    return row["ci_low"] is not None and row["ci_low"] <= value <= row["ci_high"]


def panel(seeds: int = 100, jm_sd: float = 0.25) -> None:
    t0 = time.monotonic()
    res: dict[str, list[float]] = {}

    def put(key: str, v: float) -> None:
        res.setdefault(key, []).append(float(v))

    for seed in range(seeds):
        # the same-family term with no planted preference: j-one shares its family with m-alpha and m-beta
        truth = panel_truth(seed=seed, judge_model_sd=jm_sd)
        rounds, _ = generate(truth, dilemmas=8, seed=seed, both_orders=False, rotate=True)
        bf = bias_fit(rounds, families=truth.families, replicates=200, seed=seed)
        assert bf is not None
        out = bias_json(rounds, families=truth.families, replicates=200, seed=seed)
        fam = next(r for r in out["self_and_family"] if r["term"] == "same_family")
        put("family: covers 0", _covers(fam, 0.0))
        put("family: |estimate|", abs(fam["estimate"] or 0.0))
        put("family: width", (fam["ci_high"] or 0) - (fam["ci_low"] or 0))
        bf.judge_model = None  # the dilemma bootstrap alone, as before issue 35
        _, iv = bf.term("family")
        put("family, dilemmas only: covers 0", iv.low is not None and iv.low <= 0.0 <= (iv.high or 0.0))
        put(f"judge x model sd (planted {jm_sd:.2f})", out["judge_bias_fit"]["judge_model_sd"] or 0.0)
        want = truth.controlled()
        for m in out["style"]["models"]:
            put("model means: covered", _covers(m, want[m["model"]]))
        # the self-preference (planted 0.5) when four of the models judge, their own rounds included
        truth = panel_truth(seed=seed, judge_model_sd=jm_sd, judges_are_models=True, self_pref=0.5)
        rounds, _ = generate(truth, dilemmas=8, seed=seed, both_orders=False, rotate=True)
        out = bias_json(rounds, families=truth.families, replicates=200, seed=seed)
        me = next(r for r in out["self_and_family"] if r["term"] == "self")
        put("self: |error|", abs((me["estimate"] or 0.0) - 0.5))
        put("self: within 0.3", abs((me["estimate"] or 0.0) - 0.5) < 0.3)
        put("self: covers 0.5", _covers(me, 0.5))
        # style: a relative-length bias, then an own-length bias (the models' lengths follow their skill)
        for form, kw, term, beta in (("relative", {"relative_words_beta": 1.5}, "length_relative", 1.5),
                                     ("own", {"words_beta": 0.35}, "length", 0.35)):
            truth = panel_truth(seed=seed, judge_model_sd=jm_sd, **kw)  # type: ignore[arg-type]
            rounds, _ = generate(truth, dilemmas=8, seed=seed, both_orders=False, rotate=True)
            out = bias_json(rounds, families=truth.families, replicates=200, seed=seed)
            want = truth.controlled()
            seen = {p: (truth.skill[p] + float(np.mean([truth.judge_model_effect[(j, p)] for j in truth.severity])))
                    for p in truth.skill}  # the skill plus these four judges' average liking
            shift = float(np.mean([want[p] - truth.skill[p] for p in truth.skill]))
            ms = out["style"]["models"]
            put(f"{form}: worst |controlled - skill|", max(abs(m["adjusted_mean"] - want[m["model"]]) for m in ms))
            put(f"{form}: worst |controlled - skill| <= 0.35",
                max(abs(m["adjusted_mean"] - want[m["model"]]) for m in ms) <= 0.35)
            put(f"{form}: worst |no style control - skill|",
                max(abs(m["mean_without_style"] - want[m["model"]]) for m in ms))
            put(f"{form}: worst |controlled - skill as judged|",
                max(abs(m["adjusted_mean"] - seen[m["model"]] - shift) for m in ms))
            c = next(c for c in out["style"]["coefficients"] if c["term"] == term)
            put(f"{form}: {term} interval excludes 0", c["ci_low"] is not None and (c["ci_low"] > 0 or c["ci_high"] < 0))
            put(f"{form}: {term} covers {beta}", _covers(c, beta))
    print(f"{seeds} seeds in {time.monotonic() - t0:.0f} s (judge x model sd {jm_sd})")
    print(f"{'quantity':<52} {'mean':>8} {'max':>8}")
    for k, v in res.items():
        print(f"{k:<52} {np.mean(v):>8.3f} {np.max(v):>8.3f}")


def oracle(seeds: int = 100) -> None:
    """The style contract at judge x model sd 0.25 (docs/STATISTICS.md): per form, how often the worst model's
    style-controlled mean misses the planted skill by more than 0.35 — the fit, an oracle that knows the planted
    style coefficient, the fit on scores without the pairs' likings — and how often the coefficient's interval
    excludes 0 (tests/unit/analysis/test_judge_bias_panel._oracle_run, the slow test's measurement)."""
    from tests.unit.analysis.test_judge_bias_panel import _oracle_run

    t0 = time.monotonic()
    for form in ("relative", "own"):
        runs = [_oracle_run(seed, form, 200) for seed in range(seeds)]
        for key in ("fit", "style known", "no liking"):
            v = np.array([r[key] for r in runs])
            print(f"{form:<9} {key:<12} worst error mean {v.mean():.3f} largest {v.max():.3f} > 0.35 in "
                  f"{np.mean(v > 0.35):.2f}")
        print(f"{form:<9} coefficient interval excludes 0 in {np.mean([r['excludes 0'] for r in runs]):.2f}")
    print(f"{seeds} seeds in {time.monotonic() - t0:.0f} s")


def section2(seeds: int = 100) -> None:
    """Section 2's family_preference (bias_source.preferences_of_facts) with models judging their own rounds
    (tests/support/judge_bias_sim.mixed_truth, judge x model sd 0.25, no family preference): coverage of 0 with
    a planted self-preference of 0 and of 0.5, and the self term's recovery."""
    from ebtui.core.analysis.bias_source import preferences_of_facts
    from ebtui.core.analysis.frame import Facts
    from ebtui.core.families import family_function
    from tests.support.judge_bias_sim import mixed_truth

    for sp in (0.0, 0.5):
        cov, err, self_cov = [], [], []
        for seed in range(seeds):
            truth = mixed_truth(self_pref=sp, family_pref=0.0, judge_model_sd=0.25, seed=seed)
            rounds, _ = generate(truth, dilemmas=8, seed=seed, both_orders=False, rotate=True)
            rows = {str(r["term"]): r for r in preferences_of_facts(
                Facts.from_rounds(rounds), family_function(truth.families), seed=seed, replicates=200)}
            cov.append(_covers(rows["same_family"], 0.0))
            err.append(abs((rows["self"]["estimate"] or 0.0) - sp))
            self_cov.append(_covers(rows["self"], sp))
        print(f"self {sp}: family covers 0 in {np.mean(cov):.2f}; self within 0.3 in "
              f"{np.mean(np.array(err) < 0.3):.2f}, its interval covers in {np.mean(self_cov):.2f}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--oracle" in sys.argv:
        oracle(int(args[0]) if args else 100)
    elif "--section2" in sys.argv:
        section2(int(args[0]) if args else 100)
    elif "--panel" in sys.argv:
        panel(int(args[0]) if args else 100, float(args[1]) if len(args) > 1 else 0.25)
    else:
        main(int(args[0]) if args else 40, rotate="--rotate" in sys.argv)
