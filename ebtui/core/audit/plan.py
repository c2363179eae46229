"""How many audited judgments a target half-width of the calibrated model means needs: the estimate's variance
is a part that falls as the audit grows (as (1/n - 1/N), sampling without replacement from N judgments) plus a
part a complete audit would still have, set by the dilemmas (the judges' fit's over every judgment stands in for
it), both measured on the audit so far (ebtui.core.audit.calibrate, `Calibration.parts`)."""

from __future__ import annotations

import math
from typing import Any

from ebtui.core.analysis.bootstrap import MIN_CLUSTERS, t_quantile
from ebtui.core.audit.calibrate import Calibration
from ebtui.core.views import numbers as num


def audit_size(cal: Calibration, half_width: float, *, population: int) -> dict[str, Any]:
    """{target, n_now, n_needed (None: not reachable by auditing more), floor, per_model, message}."""
    out: dict[str, Any] = {"target": half_width, "n_now": cal.n_judgments, "n_needed": None, "floor": None,
                           "population": population, "per_model": [], "message": ""}
    G = cal.clusters
    if cal.reason or not cal.parts or G < MIN_CLUSTERS:
        out["message"] = ("score a pilot first: " + (cal.reason or "no calibrated interval yet") +
                          " — the judges' disagreement with a person is measured, not assumed")
        return out
    t = t_quantile(0.975, G - 1)
    scale = G / (G - 1)
    need, floor = 0, 0.0
    for model, (sample, rest) in sorted(cal.parts.items()):
        model_floor = t * math.sqrt(rest * scale)
        budget = (half_width / t) ** 2 / scale - rest
        n = None
        if budget > 0:  # sample * (1/n - 1/N) / (1/n0 - 1/N) <= budget
            n0, N = cal.n_judgments, max(population, cal.n_judgments + 1)
            per = sample / (1 / n0 - 1 / N)
            n = max(math.ceil(1 / (budget / per + 1 / N)), 1) if per > 0 else 1
        out["per_model"].append({"model": model, "n_needed": n, "floor": model_floor,
                                 "half_width_now": t * math.sqrt((sample + rest) * scale)})
        floor = max(floor, model_floor)
        need = -1 if n is None or need < 0 else max(need, n)
    out["floor"] = floor
    if need < 0:
        out["message"] = (f"a half-width of {num.shown(half_width, 'g')} is out of reach by auditing: the dilemmas alone leave "
                          f"{num.shown(floor, '.3f')} (more dilemmas, not more audited judgments, narrow it)")
    elif need > population:
        out["n_needed"] = need
        out["message"] = (f"about {need} audited judgments, more than the {population} there are: every judgment "
                          "scored by a person is the most the audit can do")
    else:
        out["n_needed"] = need
        done = " — met already" if need <= cal.n_judgments else ""
        out["message"] = (f"about {need} audited judgments (now {cal.n_judgments}{done}) for every model's "
                          f"calibrated mean to have a 95% half-width of at most {num.shown(half_width, 'g')}")
    return out
