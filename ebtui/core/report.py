"""The report: report.md with every analysis table in both views, PNG charts, and one CSV per table.

Model text quoted in the report is inert: control sequences are stripped (safe_text.strip_control) and
Markdown/HTML-significant characters are escaped in table cells, so ANSI/OSC escapes, Rich markup such as
"[bold red]" or "<script>" show as plain text in any Markdown viewer.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from ebtui.core import analysis as an
from ebtui.core.analysis import Cell, ConsistencyClassification, Table
from ebtui.core.records import CRITERIA, Round, Tournament
from ebtui.core.safe_text import strip_control

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#!])")


def md_escape(text: str) -> str:
    """Make text inert inside a Markdown table cell (and safe from HTML interpretation)."""
    text = strip_control(str(text))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return re.sub(r"\s*\n\s*", " ", text).strip()


def format_cell(value: Cell, column: str = "") -> str:
    """How a value is shown in Markdown (CSV keeps full precision): 2 decimals; p-values 3 significant digits."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}" if column.endswith("_p") else f"{value:.2f}"
    return str(value)


def csv_cell(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return strip_control(str(value))


def table_to_markdown(table: Table) -> str:
    head = "| " + " | ".join(md_escape(c) for c in table.columns) + " |"
    sep = "|" + "|".join(" ---: " if _numeric(table, i) else " --- " for i in range(len(table.columns))) + "|"
    lines = [head, sep]
    for row in table.rows:
        lines.append("| " + " | ".join(md_escape(format_cell(v, c)) for v, c in zip(row, table.columns, strict=True))
                     + " |")
    if not table.rows:
        lines.append("| " + " | ".join("" for _ in table.columns) + " |")
    return "\n".join(lines)


def _numeric(table: Table, i: int) -> bool:
    vals = [r[i] for r in table.rows if r[i] is not None]
    return bool(vals) and all(isinstance(v, int | float) for v in vals)


def write_csv(table: Table, path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(table.columns)
        for row in table.rows:
            w.writerow([csv_cell(v) for v in row])
    return path


def csv_name(table: Table) -> str:
    return f"{table.key}__{table.view}.csv"


# ---- charts ------------------------------------------------------------------------------------------


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def chart_model_criteria(table: Table, path: Path) -> Path | None:
    """Grouped bars: per criterion, each model's mean as presenting team."""
    rows = [r for r in table.as_dicts() if r["role"] == "presenting" and r["criterion"] in CRITERIA]
    models = sorted({str(r["model"]) for r in rows})
    if not models:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(models)
    for i, m in enumerate(models):
        vals = {r["criterion"]: r["mean"] for r in rows if r["model"] == m}
        ys = [vals.get(c) if vals.get(c) is not None else float("nan") for c in CRITERIA]  # missing: no bar
        ax.bar([k + i * width for k in range(len(CRITERIA))], ys, width, label=m)
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(CRITERIA))])
    ax.set_xticklabels([c.replace("_", "\n") for c in CRITERIA], fontsize=8)
    ax.set_ylim(0, 10)
    ax.set_ylabel("mean score (Team A, presenting)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def chart_cross_model(table: Table, path: Path) -> Path | None:
    if not table.rows or len(table.columns) < 2:
        return None
    plt = _pyplot()
    import numpy as np

    data = np.array([[v if v is not None else np.nan for v in r[1:]] for r in table.rows], dtype=float)
    fig, ax = plt.subplots(figsize=(1.4 * data.shape[1] + 3, 0.9 * data.shape[0] + 2))
    im = ax.imshow(data, cmap="viridis", vmin=1, vmax=10)
    ax.set_xticks(range(data.shape[1]), [str(c) for c in table.columns[1:]], rotation=30, ha="right")
    ax.set_yticks(range(data.shape[0]), [str(r[0]) for r in table.rows])
    ax.set_xlabel("Team B model")
    ax.set_ylabel("Team A model")
    for (i, j), v in np.ndenumerate(data):
        if not np.isnan(v):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="white", fontsize=8)
    fig.colorbar(im, ax=ax, label="Team A mean score")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def chart_judge_offsets(table: Table, path: Path) -> Path | None:
    rows = [r for r in table.as_dicts() if r["mean_offset"] is not None]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(rows) + 1.5))
    ys = range(len(rows))
    means = [float(r["mean_offset"]) for r in rows]  # type: ignore[arg-type]
    lo = [m - float(r["ci95_low"]) if r["ci95_low"] is not None else 0 for m, r in zip(means, rows, strict=True)]
    hi = [float(r["ci95_high"]) - m if r["ci95_high"] is not None else 0 for m, r in zip(means, rows, strict=True)]
    ax.errorbar(means, list(ys), xerr=[lo, hi], fmt="o", capsize=4)
    ax.axvline(0, color="grey", linewidth=1)
    ax.set_yticks(list(ys), [str(r["judge"]) for r in rows])
    ax.set_xlabel("mean offset from the other judges (95% CI)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# ---- the report -------------------------------------------------------------------------------------------

SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("1. Model comparison", ("model_comparison",)),
    ("2. Dilemma difficulty", ("dilemma_difficulty",)),
    ("3. Cross-model matrix", ("cross_model", "cross_model_n")),
    ("4. Consistency", ("consistency_summary", "consistency_answers")),
    ("5. Framework usage", ("framework_usage", "framework_quotes")),
    ("6. Judge agreement", ("judge_alpha", "judge_correlation", "judge_offsets", "judge_family")),
    ("7. Self-debate", ("self_debate",)),
)

VIEW_HEADINGS = {
    an.VIEW_EFFECTIVE: "With human overrides applied",
    an.VIEW_AS_JUDGED: "As judged (judges' scores, no overrides)",
    an.VIEW_BOTH: "Both views (reads no scores)",
}


def build_tables(
    rounds: Sequence[Round],
    *,
    classifications: Mapping[str, ConsistencyClassification] | None = None,
    families: Mapping[str, str] | None = None,
) -> dict[str, list[Table]]:
    """table key -> its tables (effective view first, then as judged; or the one view-free table)."""
    out: dict[str, list[Table]] = {}
    for effective in (True, False):
        for t in an.analyse(rounds, effective=effective, classifications=classifications, families=families):
            out.setdefault(t.key, []).append(t)
    for t in an.framework_usage(rounds):
        out[t.key] = [t]
    return out


def _render_table(t: Table) -> list[str]:
    lines = [f"#### {md_escape(t.title)} — {VIEW_HEADINGS[t.view]}", ""]
    if t.coverage is not None:
        lines += [f"Left out as missing: {t.coverage.describe()}.", ""]
    lines += [table_to_markdown(t), ""]
    lines += [f"- {md_escape(n)}" for n in t.notes]
    lines += [f"- CSV: [{csv_name(t)}]({csv_name(t)})", ""]
    return lines


def _override_lines(rounds: Sequence[Round]) -> list[str]:
    rows = []
    for r in sorted(rounds, key=lambda r: r.id):
        if r.judgment is None:
            continue
        for (team, crit), ov in sorted(r.judgment.active_overrides().items()):
            rows.append([r.id, r.judge_model, team, crit, ov.parsed_value, ov.value, ov.note])
    if not rows:
        return ["No human overrides: the two views are identical.", ""]
    t = Table("overrides", "Overrides in force", ["round", "judge", "team", "criterion", "judged", "override", "note"],
              rows, text_columns=frozenset({"note"}))
    return [f"{len(rows)} human overrides are in force; they are the only differences between the two views:", "",
            table_to_markdown(t), ""]


def write_report(
    rounds: Sequence[Round],
    out_dir: str | Path,
    *,
    title: str,
    tournament: Tournament | None = None,
    classifications: Mapping[str, ConsistencyClassification] | None = None,
    families: Mapping[str, str] | None = None,
) -> Path:
    """Write report.md, the charts and one CSV per table into out_dir; return the path of report.md."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = build_tables(rounds, classifications=classifications, families=families)
    for ts in tables.values():
        for t in ts:
            write_csv(t, out / csv_name(t))

    charts: dict[str, list[tuple[str, str]]] = {}
    eff = {k: v[0] for k, v in tables.items()}
    for key, fn, name, alt in (
        ("model_comparison", chart_model_criteria, "model_criteria.png", "Mean score per criterion and model"),
        ("cross_model", chart_cross_model, "cross_model.png", "Cross-model heatmap"),
        ("judge_offsets", chart_judge_offsets, "judge_offsets.png", "Judge offsets with 95% CI"),
    ):
        if fn(eff[key], out / name) is not None:
            charts.setdefault(key, []).append((name, alt))

    statuses = Counter(str(r.status) for r in rounds)
    n_ex = len(an.exchanges(rounds))
    cov_eff, cov_raw = an.coverage(rounds, True), an.coverage(rounds, False)
    lines = [f"# {md_escape(title)}", ""]
    if tournament is not None:
        lines += [f"- Tournament: {md_escape(tournament.name or tournament.id)} (id {md_escape(tournament.id)}), "
                  f"status {md_escape(str(tournament.status))}"]
    lines += [
        f"- Rounds: {len(rounds)} ("
        + ", ".join(f"{md_escape(k)} {v}" for k, v in sorted(statuses.items())) + f"); exchanges: {n_ex}",
        f"- Models: {', '.join(md_escape(m) for m in an._models(rounds))}",
        f"- Judges: {', '.join(md_escape(j) for j in sorted({r.judge_model for r in rounds}))}",
        f"- Dilemmas: {len({r.dilemma_id for r in rounds})}",
        f"- Generated: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        "",
        "## How missing data was handled",
        "",
        "A score the judge did not give is missing: it is left out of every mean and count, never treated "
        "as 0. Rounds without a judgment (failed or unfinished) are left out of every score table. Each "
        "table says how many rounds and scores it left out.",
        f"With overrides applied: {cov_eff.describe()}. As judged: {cov_raw.describe()}.",
        "",
        "A judge panel (several judges scoring the same exchange) counts as one observation per team: its "
        "scores are averaged per criterion first (except in the judge-agreement tables, which compare them). "
        "Confidence intervals are 95% Student-t intervals (scipy); n < 2 leaves them blank.",
        "",
        "Every table appears twice: with human overrides applied, and as judged.",
        "",
        "## Overrides",
        "",
        *_override_lines(rounds),
    ]
    for heading, keys in SECTIONS:
        lines += [f"## {heading}", ""]
        for key in keys:
            for name, alt in charts.get(key, []):
                lines += [f"![{alt} (with overrides applied)]({name})", ""]
            for t in tables[key]:
                lines += _render_table(t)
    path = out / "report.md"
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path


__all__ = ["write_report", "build_tables", "table_to_markdown", "write_csv", "md_escape"]
