"""The descriptive score tables: model x criterion, dilemma difficulty, cross-model matrix."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from ebtui.core.analysis.bootstrap import SCALE, cluster_mean
from ebtui.core.analysis.common import (
    OVERALL,
    ROLES,
    SEATS,
    Cell,
    Table,
    coverage,
    exchanges,
    mean_or_none,
    models_in,
    view_name,
)
from ebtui.core.records import CRITERIA, Round, Team

# ---- 1 model comparison -----------------------------------------------------------------------------


def model_comparison(rounds: Sequence[Round], *, effective: bool = True) -> Table:
    """Per model and role (presenting = Team A, responding = Team B), each criterion's mean, n and 95% interval
    (cluster bootstrap over dilemmas; blank below 3 dilemmas, with the reason)."""
    values: dict[tuple[str, Team, str], list[tuple[float, str]]] = defaultdict(list)
    for ex in exchanges(rounds):
        for team in SEATS:
            means = ex.criterion_means(team, effective)
            for c, v in means.items():
                if v is not None:
                    values[(ex.model(team), team, c)].append((v, ex.dilemma_id))
            overall = ex.overall(team, effective)
            if overall is not None:
                values[(ex.model(team), team, OVERALL)].append((overall, ex.dilemma_id))
    rows: list[list[Cell]] = []
    for model in models_in(rounds):
        for team in SEATS:
            for c in (*CRITERIA, OVERALL):
                got = values.get((model, team, c), [])
                if not got and c == OVERALL:
                    continue
                mean, iv = cluster_mean([v for v, _ in got], [d for _, d in got], clip=SCALE)
                rows.append([model, ROLES[team], c, len(got), mean, iv.low, iv.high, iv.note if got else ""])
    return Table(
        "model_comparison",
        "Model comparison: raw mean score per criterion by role",
        ["model", "role", "criterion", "n", "mean", "ci95_low", "ci95_high", "interval_note"],
        rows,
        view=view_name(effective),
        coverage=coverage(rounds, effective),
        notes=[
            "n counts exchanges (a judge panel's scores for one answer are averaged first). Raw means: not "
            "adjusted for the judges (see the models table for that).",
            f"{OVERALL}: per exchange, the mean of the criteria the judges gave.",
        ],
    )


# ---- 2 dilemma difficulty ----------------------------------------------------------------------------


def dilemma_difficulty(rounds: Sequence[Round], *, effective: bool = True) -> Table:
    """Per dilemma: mean across models, spread between models (max-min and sd of model means), rank."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    titles: dict[str, str] = {}
    n_ex: dict[str, int] = defaultdict(int)
    for ex in exchanges(rounds):
        titles.setdefault(ex.dilemma_id, ex.dilemma_title)
        n_ex[ex.dilemma_id] += 1
        for team in ("a", "b"):
            v = ex.overall(team, effective)
            if v is not None:
                per[ex.dilemma_id][ex.model(team)].append(v)
    rows: list[list[Cell]] = []
    for d in sorted(set(titles)):
        model_means = {m: float(np.mean(vs)) for m, vs in per.get(d, {}).items() if vs}
        mean: float | None
        spread: float | None
        sd: float | None
        low: str | None
        high: str | None
        if model_means:
            arr = np.array(list(model_means.values()))
            mean = float(np.mean(arr))
            spread = float(np.max(arr) - np.min(arr))
            sd = float(np.std(arr, ddof=1)) if len(arr) >= 2 else None
            low = min(model_means, key=lambda m: (model_means[m], m))
            high = max(model_means, key=lambda m: (model_means[m], m))
        else:
            mean = spread = sd = None
            low = high = None
        rows.append([d, titles[d], n_ex[d], len(model_means), mean, spread, sd, low, high, None, ""])
    ranked = sorted((r for r in rows if r[4] is not None), key=lambda r: (r[4], r[0]))
    for i, r in enumerate(ranked, 1):
        r[9] = i
    if len(ranked) >= 2:
        ranked[0][10] = "hardest"
        ranked[-1][10] = "easiest"
    return Table(
        "dilemma_difficulty",
        "Dilemma difficulty",
        ["dilemma", "title", "exchanges", "models", "mean", "spread", "sd", "lowest_model", "highest_model",
         "rank", "verdict"],
        rows,
        view=view_name(effective),
        coverage=coverage(rounds, effective),
        text_columns=frozenset({"title"}),
        notes=[
            "A model's mean on a dilemma is the mean of its overall scores there (both roles); the dilemma's "
            "mean is the mean of its model means (each model weighs the same); spread = highest - lowest "
            "model mean; sd = sample sd of the model means. Rank 1 = lowest mean = hardest.",
        ],
    )


# ---- 3 cross-model matrix -----------------------------------------------------------------------------


def cross_model(rounds: Sequence[Round], *, effective: bool = True) -> tuple[Table, Table]:
    """Team A model x Team B model: Team A's mean overall score, and how many exchanges each cell holds."""
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    a_models = sorted({r.team_a_model for r in rounds})
    b_models = sorted({r.team_b_model for r in rounds})
    for ex in exchanges(rounds):
        v = ex.overall("a", effective)
        if v is not None:
            cells[(ex.team_a_model, ex.team_b_model)].append(v)
    cols = ["team_a_model", *b_models]
    means: list[list[Cell]] = [[a, *[mean_or_none(cells.get((a, b), [])) for b in b_models]] for a in a_models]
    counts: list[list[Cell]] = [[a, *[len(cells.get((a, b), [])) for b in b_models]] for a in a_models]
    cov = coverage(rounds, effective)
    view = view_name(effective)
    return (
        Table("cross_model", "Cross-model matrix: Team A's mean score (rows: Team A, columns: Team B)",
              cols, means, view=view, coverage=cov,
              notes=["Cell: mean of Team A's overall score over the exchanges with that pairing; blank: none."]),
        Table("cross_model_n", "Cross-model matrix: exchanges with a Team A score", cols, counts, view=view,
              coverage=cov),
    )


