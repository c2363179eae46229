"""The report: report.md (the joint fit's tables first, then the descriptive ones; the with-overrides view only
where overrides exist), PNG charts with interval bars, one CSV per table, and the JSON of `report --json`.

Model text quoted in the report is inert: control sequences are stripped (safe_text.strip_control) and
Markdown/HTML-significant characters are escaped in table cells, so ANSI/OSC escapes, Rich markup such as
"[bold red]" or "<script>" show as plain text in any Markdown viewer.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast

from ebtui.core import analysis as an
from ebtui.core.analysis import Cell, ConsistencyClassification, Table, columnar
from ebtui.core.analysis.compare import finite
from ebtui.core.analysis.frame import Facts
from ebtui.core.records import CRITERIA, Round, Tournament
from ebtui.core.safe_text import strip_control
from ebtui.core.views import numbers as num

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ebtui.core.analysis.bias_types import BiasSection

T = TypeVar("T")
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
        return num.sig(value) if column.endswith("_p") or column in ("p", "p_holm") else num.fixed(value)
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


def write_rows_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[T]],
                   cell: Callable[[T], str]) -> Path:
    """A CSV file (UTF-8): the header, then each row's values as `cell` writes them."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows([cell(v) for v in row] for row in rows)
    return path


def write_csv(table: Table, path: Path) -> Path:
    return write_rows_csv(path, table.columns, table.rows, csv_cell)


def csv_name(table: Table) -> str:
    return f"{table.key}__{table.view}.csv"


# ---- charts ------------------------------------------------------------------------------------------


def _pyplot() -> ModuleType:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _interval_chart(rows: list[dict[str, Cell]], key: str, width: float, pad: float) -> tuple[ModuleType, Figure, Axes]:
    """A figure with one row per entry: the value under `key` with its 95% interval (ci_low, ci_high) as
    error bars; returns (pyplot, figure, axes) for the caller's labels and extras."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(width, 0.55 * len(rows) + pad))
    values = [float(r[key]) for r in rows]  # type: ignore[arg-type]
    lo = [v - float(r["ci_low"]) if r["ci_low"] is not None else 0.0 for v, r in zip(values, rows, strict=True)]
    hi = [float(r["ci_high"]) - v if r["ci_high"] is not None else 0.0 for v, r in zip(values, rows, strict=True)]
    ax.errorbar(values, range(len(rows)), xerr=[lo, hi], fmt="o", capsize=4,
                label="adjusted mean, 95% interval" if key == "mean" else None)
    return plt, fig, ax


def _save(plt: ModuleType, fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def chart_models(table: Table, path: Path) -> Path | None:
    """Adjusted mean per model with its 95% interval (bar), the raw mean as a cross."""
    rows = [r for r in table.as_dicts() if r["mean"] is not None]
    if not rows:
        return None
    rows.sort(key=lambda r: float(r["mean"]))  # type: ignore[arg-type]
    plt, fig, ax = _interval_chart(rows, "mean", 7.5, 1.6)
    ys = list(range(len(rows)))
    raw = [float(r["raw_mean"]) if r["raw_mean"] is not None else float("nan") for r in rows]
    ax.plot(raw, ys, "x", color="grey", label="raw mean")
    ax.set_yticks(ys, [str(r["model"]) for r in rows])
    ax.set_xlim(1, 10)
    ax.set_xlabel("score (1-10)")
    ax.legend(fontsize=8, loc="lower right")
    return _save(plt, fig, path)


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
            ax.text(j, i, num.fixed(v), ha="center", va="center", color="white", fontsize=8)
    fig.colorbar(im, ax=ax, label="Team A mean score")
    return _save(plt, fig, path)


def chart_judge_offsets(table: Table, path: Path) -> Path | None:
    """Each judge's offset from the average judge with its 95% interval."""
    rows = [r for r in table.as_dicts() if r["offset"] is not None]
    if not rows:
        return None
    plt, fig, ax = _interval_chart(rows, "offset", 7, 1.5)
    ax.axvline(0, color="grey", linewidth=1)
    ax.set_yticks(list(range(len(rows))), [str(r["judge"]) for r in rows])
    ax.set_xlabel("offset from the average judge (95% interval; negative = harsh)")
    return _save(plt, fig, path)


# ---- the report -------------------------------------------------------------------------------------------

VIEW_HEADINGS = {
    an.VIEW_EFFECTIVE: "With human overrides applied",
    an.VIEW_AS_JUDGED: "As judged (judges' scores, no overrides)",
    an.VIEW_BOTH: "Both views (reads no scores)",
}

#: (heading, table keys) in the order the report shows them
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("1. Models", ("models", "variance_components", "criteria_by_model")),
    ("1a. Which model is better: pairwise comparisons, ranks, robustness", ("pairwise", "ranks", "robustness")),
    ("2. Judges", ("judges", "judge_vs_human", "family_preference")),
    ("3. Judge agreement", ("judge_agreement", "judge_correlation")),
    ("4. Dilemmas", ("dilemmas", "dilemma_difficulty")),
    ("5. Cross-model matrix", ("cross_model", "cross_model_n")),
    ("6. Self-debate", ("self_debate",)),
    ("7. Consistency", ("consistency_summary", "consistency_answers")),
    ("8. Framework usage", ("framework_usage", "framework_quotes")),
    ("9. Judge bias and reliability", ("style_coefficients", "style_models", "judge_order", "agreement_with_own_view",
                                      "self_and_family", "reliability_alpha", "reliability_test_retest",
                                      "criteria_structure")),
)

#: fit tables shown with overrides applied too (when overrides exist); criteria_by_model is as parsed by definition
FIT_KEYS_BOTH_VIEWS = ("models", "judges", "family_preference", "self_debate", "dilemmas")


class Omitted(TypedDict):
    """A section, sample or cap the report did not compute, and why (`omitted` in `report --json`)."""

    section: str
    reason: str


@dataclass
class ReportData:
    """Everything a report, its CSVs, `report --json` and the TUI show — computed once."""

    rounds: int
    as_judged: an.Analysis
    with_overrides: an.Analysis | None  # None: no override in force (the views would be identical)
    judge_vs_human: Table | None
    tables: dict[str, list[Table]] = field(default_factory=dict)  # key -> as-judged first, then with overrides
    #: per imported run among the rounds (ebtui.core.importers.eb.provenance_summary); empty when none
    imported: Sequence[Mapping[str, object]] = field(default_factory=list)
    #: style, order, agreement_bias, reliability, judgments (ebtui.core.analysis.bias_report)
    judge_bias: BiasSection | None = None
    #: the per-judgment columns everything was computed from (the Markdown header reads them too)
    facts: Facts | None = field(default=None, repr=False)
    #: sections, samples or caps not computed, each with the reason (`omitted` in the JSON when any)
    omitted: list[Omitted] = field(default_factory=list)
    #: the human audit's calibration (`human_audit` in the JSON; ebtui.core.usecases.audit), None: not computed
    human_audit: Mapping[str, object] | None = None

    def json(self) -> dict[str, object]:
        """The report's JSON object (`report --json` without its filters and unreadable files)."""
        clean: dict[str, object] = finite(self._json(Table.as_dicts))
        return clean

    def json_parts(self) -> dict[str, object]:
        """`json()` with each table's rows left as a RowsJSON and no float cleaned yet: what `dumps_json` writes
        as the same text, faster."""
        return self._json(RowsJSON)

    def _json(self, rows_of: Callable[[Table], object]) -> dict[str, object]:
        out: dict[str, object] = {"view": an.VIEW_AS_JUDGED, "n_rounds": self.rounds, "n_dilemmas": self.as_judged.dilemmas,
                               "excluded": self.as_judged.excluded.as_dict(),
                               "bootstrap": {"seed": self.as_judged.seed, "replicates": self.as_judged.replicates,
                                             "unit": "dilemma", "confidence": 0.95},
                               "criteria": list(CRITERIA), **self.as_judged.json()}
        for key, ts in self.tables.items():
            if key not in out:
                out[key] = rows_of(ts[0])
        if self.with_overrides is not None:
            extra = {k: rows_of(ts[1]) for k, ts in self.tables.items()
                     if len(ts) > 1 and k not in self.as_judged.tables}
            out["with_overrides"] = {**{k: v for k, v in self.with_overrides.json().items()
                                        if k in (*FIT_KEYS_BOTH_VIEWS, "fit")}, **extra}
        out["judge_vs_human"] = rows_of(self.judge_vs_human) if self.judge_vs_human else []
        out["imported"] = self.imported
        if self.judge_bias is not None:
            out.update(self.judge_bias)
        if self.omitted:
            out["omitted"] = [dict(o) for o in self.omitted]
        if self.human_audit is not None:
            out["human_audit"] = self.human_audit
        return out


def build_report_data(
    rounds: Sequence[Round] | Facts,
    *,
    classifications: Mapping[str, ConsistencyClassification] | None = None,
    families: Mapping[str, str] | None = None,
    seed: int = an.DEFAULT_SEED,
    replicates: int = an.DEFAULT_REPLICATES,
    agreement: Mapping[tuple[str, str], Mapping[str, bool | None]] | None = None,
    omitted: Sequence[Omitted] = (),
    judge_bias: BiasSection | Callable[[], BiasSection] | None = None,
    cache: Path | None = None,
) -> ReportData:
    """Every table of the report, from rounds or from their columns (`Facts`, e.g. from
    ebtui.core.analysis.source.FactsSource: no round file is read). Every judgment of a round counts (a panel
    of its judgments: `ebtui rejudge` adds them), in every section: the judge-bias section (style, order,
    agreement, reliability) reads the same columns (ebtui.core.analysis.bias_source). `omitted`: what the
    caller left out, added to the report's own `omitted` list; `judge_bias`: the judge-bias section already
    computed over these rows (bias_source.cached_section), or a function giving it (called last: a fork may be
    computing it, analysis.ahead), else it is computed here; `cache`: the store's analysis columns folder,
    where the variance components are kept (analysis.variance_cache)."""
    from ebtui.core.analysis.bias_report import bias_tables
    from ebtui.core.analysis.bias_source import judge_bias_section_of_facts
    from ebtui.core.analysis.report_ahead import descriptive_of

    given = None if isinstance(rounds, Facts) else list(rounds)
    facts = rounds if isinstance(rounds, Facts) else Facts.from_rounds(given or [])
    overrides = columnar.has_overrides(facts)
    base = an.analyse_fit(facts, families=families, seed=seed, replicates=replicates, cache=cache)
    eff = an.analyse_fit(facts, families=families, effective=True, seed=seed, replicates=replicates, cache=cache) \
        if overrides else None
    # the tables that read the columns only (from a fork computing them meanwhile, else here)
    jvh, views, frameworks = descriptive_of(facts, seed=seed, replicates=replicates, classifications=classifications)
    data = ReportData(len(facts), base, eff, jvh)
    tables: dict[str, list[Table]] = {k: [t] for k, t in base.tables.items()}
    if eff is not None:
        for k in FIT_KEYS_BOTH_VIEWS:
            tables[k].append(eff.tables[k])
    if data.judge_vs_human is not None:
        tables["judge_vs_human"] = [data.judge_vs_human]
    for effective, view in views:
        for t in view:
            if not effective or t.key not in ("judge_agreement", "judge_correlation"):  # agreement: parsed only
                tables.setdefault(t.key, []).append(t)
    for t in frameworks:
        tables[t.key] = [t]
    data.tables = tables
    data.imported = columnar.provenance_summary(facts)
    data.facts = facts
    data.rounds = len(given) if given is not None else len(set(facts.round.tolist()))
    data.omitted = list(omitted)
    if len(facts):
        data.judge_bias = judge_bias() if callable(judge_bias) else judge_bias if judge_bias is not None else \
            judge_bias_section_of_facts(facts, families=families, agreement=agreement, seed=seed,
                                        replicates=replicates)
        for t in bias_tables(data.judge_bias):
            data.tables[t.key] = [t]
    else:
        data.omitted.append({"section": "judge_bias", "reason": "no rounds selected"})
    return data


def build_tables(rounds: Sequence[Round]) -> dict[str, list[Table]]:
    """table key -> its tables (as judged first, then with overrides where overrides exist)."""
    return build_report_data(rounds).tables


def criteria_wide(table: Table) -> Table:
    """criteria_by_model shown with models as rows and criteria as columns (the same numbers)."""
    rows = table.as_dicts()
    models = sorted({str(r["model"]) for r in rows})
    cell: dict[tuple[str, str], tuple[Cell, int]] = {
        (str(r["model"]), str(r["criterion"])): (r["raw_mean"], int(r["n"] or 0)) for r in rows}
    out: list[list[Cell]] = []
    for m in models:
        ns = sorted({cell.get((m, c), (None, 0))[1] for c in CRITERIA})
        out.append([m, *[cell.get((m, c), (None, 0))[0] for c in CRITERIA], "/".join(str(n) for n in ns)])
    return Table(table.key, table.title, ["model", *CRITERIA, "n"], out, view=table.view, notes=table.notes)


def _render_table(t: Table, shown: Table | None = None) -> list[str]:
    lines = [f"#### {md_escape(t.title)} — {VIEW_HEADINGS[t.view]}", ""]
    if t.coverage is not None:
        lines += [f"Left out as missing: {t.coverage.describe()}.", ""]
    lines += [table_to_markdown(shown or t), ""]
    lines += [f"- {md_escape(n)}" for n in t.notes]
    lines += [f"- CSV: [{csv_name(t)}]({csv_name(t)})", ""]
    return lines


def _override_lines(facts: Facts) -> list[str]:
    rows: list[list[Cell]] = []
    ids = facts.id.tolist()
    for i in sorted(range(len(ids)), key=lambda i: ids[i]):
        if not facts.judged[i]:
            continue
        for team, crit, parsed, value, note in facts.override_rows(i):
            rows.append([ids[i], str(facts.judge[i]), team, crit, parsed, value, note])
    if not rows:
        return ["No human overrides: every table shows the judges' scores as parsed.", ""]
    t = Table("overrides", "Overrides in force", ["round", "judge", "team", "criterion", "judged", "override", "note"],
              rows, text_columns=frozenset({"note"}))
    return [f"{len(rows)} human overrides are in force. Score tables are shown as judged and, below each, with "
            "the overrides applied; the judge-vs-human table compares the two.", "",
            table_to_markdown(t), ""]


def _expanded(rounds: Sequence[Round]) -> list[Round]:
    """Every judgment of every round as a round of its own (ebtui.core.analysis.judge_bias.expand_judgments)."""
    from ebtui.core.analysis.judge_bias import expand_judgments

    return expand_judgments(rounds)


def adaptive_of(tournament: Tournament | None) -> dict[str, object] | None:
    """The report's `adaptive` object of an adaptive tournament (ebtui.core.analysis.sequential.adaptive_summary),
    else None."""
    from ebtui.core.analysis.sequential import adaptive_summary

    return adaptive_summary((tournament.model_extra or {}).get("adaptive")) if tournament is not None else None


def _num(x: object, fmt: str = ".3f") -> str:
    return "—" if not isinstance(x, (int, float)) else format(x, fmt)


def adaptive_head(summary: Mapping[str, Any]) -> list[str]:
    """An adaptive tournament's target, rule and why it stopped, as lines of plain text."""
    rule = cast("Mapping[str, Any]", summary["rule"])
    return [f"Target: every pairwise half-width at most ±{_num(summary['target_half_width'], 'g')}",
            f"Rule: {rule['description']}", f"Stopped: {summary['stop_reason']} — {summary['stop_message']}"]


def adaptive_tables(summary: Mapping[str, Any]) -> list[Table]:
    """An adaptive tournament's looks (with the wave planned at each) and its anytime-valid pairwise intervals."""
    looks = cast("list[Mapping[str, Any]]", summary["looks"])
    waves = {w["number"]: w for w in cast("list[Mapping[str, Any]]", summary["waves"])}
    rows: list[list[Cell]] = []
    for m in looks:
        w = waves.get(m.get("look"))  # wave k is planned at look k
        rows.append([m.get("look"), _num(m.get("alpha"), ".4g"), m.get("calls"), m.get("dilemmas"), m.get("widest"),
                     m.get("widest_fixed"), m.get("uniform_calls"),
                     f"{w['kind']} +{w['units']} ({w['calls']} calls)" if w else ""])
    out = [Table("adaptive_looks", "Adaptive looks: widest anytime-valid half-width at each (widest_fixed: the "
                 "fixed-sample one)", ["look", "alpha", "calls", "dilemmas", "widest", "widest_fixed",
                                       "uniform_calls", "wave after"], rows,
                 text_columns=frozenset({"alpha", "wave after"}), notes=adaptive_head(summary))]
    cols = ["a", "b", "diff", "ci_low", "ci_high", "half_width", "fixed_half_width", "reason"]
    pairs = cast("list[Mapping[str, Any]]", summary["pairwise"])
    out.append(Table("adaptive_pairwise", f"Anytime-valid pairwise intervals (look {summary['look']}, alpha "
                     f"{_num(summary['alpha'], '.4g')}, Bonferroni over the pairs)",
                     cols, [[p.get(c) for c in cols] for p in pairs], text_columns=frozenset({"reason"}),
                     notes=[str(summary["note"])] if pairs else [f"No anytime-valid intervals: {summary['reason']}."]))
    return out


def adaptive_markdown(summary: Mapping[str, Any]) -> list[str]:
    """The Markdown section of an adaptive tournament: the rule, the looks and waves, why it stopped, and its
    anytime-valid pairwise intervals."""
    lines = ["## Adaptive tournament", ""]
    for t in adaptive_tables(summary):
        lines += [f"#### {md_escape(t.title)}", "", table_to_markdown(t), "", *[f"- {md_escape(n)}" for n in t.notes],
                  ""]
    return lines


def write_report(
    rounds: Sequence[Round] | Facts,
    out_dir: str | Path,
    *,
    title: str,
    tournament: Tournament | None = None,
    classifications: Mapping[str, ConsistencyClassification] | None = None,
    families: Mapping[str, str] | None = None,
    data: ReportData | None = None,
) -> Path:
    """Write report.md, the charts and one CSV per table into out_dir; return the path of report.md."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = data or build_report_data(rounds, classifications=classifications, families=families)
    facts = data.facts if data.facts is not None else Facts.from_rounds(rounds)  # type: ignore[arg-type]
    tables = data.tables
    for ts in tables.values():
        for t in ts:
            write_csv(t, out / csv_name(t))

    charts: dict[str, list[tuple[str, str]]] = {}
    first = {k: v[0] for k, v in tables.items()}
    for key, fn, name, alt in (
        ("models", chart_models, "models.png", "Adjusted mean per model with 95% intervals; crosses: raw means"),
        ("judges", chart_judge_offsets, "judge_offsets.png", "Judge offsets from the average judge, 95% intervals"),
        ("cross_model", chart_cross_model, "cross_model.png", "Cross-model heatmap"),
    ):
        if key in first and fn(first[key], out / name) is not None:
            charts.setdefault(key, []).append((name, alt))

    statuses = Counter(str(s) for s in dict(zip(facts.round.tolist(), facts.status.tolist(), strict=True)).values())
    n_ex = len(set(facts.exchange.tolist()))
    from ebtui.core.importers.eb import summary_lines  # (only the Markdown names imported runs)

    excluded = data.as_judged.excluded.describe()
    lines = [f"# {md_escape(title)}", ""]
    n_rounds = len(set(facts.round.tolist()))
    if tournament is not None:
        lines += [f"- Tournament: {md_escape(tournament.name or tournament.id)} (id {md_escape(tournament.id)}), "
                  f"status {md_escape(str(tournament.status))}"]
    lines += [
        f"- Rounds: {n_rounds} ("
        + ", ".join(f"{md_escape(k)} {v}" for k, v in sorted(statuses.items())) + f"); exchanges: {n_ex}"
        + (f"; judgments: {len(facts)} (every one counts)" if n_rounds != len(facts) else ""),
        f"- Models: {', '.join(md_escape(m) for m in facts.models())}",
        f"- Judges: {', '.join(md_escape(j) for j in sorted(set(facts.judge.tolist())))}",
        f"- Dilemmas: {len(set(facts.dilemma.tolist()))}",
        f"- Excluded: {md_escape(excluded)}",
        *[f"- Not computed: {md_escape(o['section'])} ({md_escape(o['reason'])})" for o in data.omitted],
        *[f"- Imported: {md_escape(line)}" for line in summary_lines(data.imported)],
        f"- Generated: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        "",
        "## How to read this report",
        "",
        md_escape(an.ADJUSTMENT_PARAGRAPH),
        "",
        "A score the judge did not give is missing: it is left out of every mean and count, never treated as 0. "
        "Rounds without a judgment (failed or incomplete) are left out. The model and assumptions are in "
        "docs/STATISTICS.md.",
        "",
        "## Overrides",
        "",
        *_override_lines(facts),
    ]
    adaptive = adaptive_of(tournament)
    if adaptive is not None:
        lines += adaptive_markdown(adaptive)
    for heading, keys in SECTIONS:
        present = [k for k in keys if k in tables]
        if not present:
            continue
        lines += [f"## {heading}", ""]
        for key in present:
            for name, alt in charts.get(key, []):
                lines += [f"![{alt}]({name})", ""]
            for t in tables[key]:
                lines += _render_table(t, criteria_wide(t) if key == "criteria_by_model" else None)
    shown = {k for _, keys in SECTIONS for k in keys}
    rest = [csv_name(t) for k, ts in tables.items() if k not in shown for t in ts]
    if rest:
        lines += ["## More tables (CSV only)", "", *[f"- [{n}]({n})" for n in rest], ""]
    path = out / "report.md"
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path


__all__ = ["write_report", "build_tables", "build_report_data", "ReportData", "table_to_markdown", "write_csv",
           "md_escape", "adaptive_of", "adaptive_head", "adaptive_markdown", "adaptive_tables"]


# ---- the report's JSON text, written a table at a time ------------------------------------------------


class RowsJSON:
    """A table's rows as `dumps_json` writes them: the text of `Table.as_dicts()` with non-finite floats as
    null, built column by column (the consistency table holds 100,000 rows: as dicts, then copied by
    `finite`, then encoded, they cost a second of a warm report at 100,000 rounds)."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table


def dumps_json(value: object) -> str:
    """`json.dumps(finite(value), ensure_ascii=False, allow_nan=False)`, byte for byte, where `value` may hold
    RowsJSON in dicts (each written as `finite(table.as_dicts())` would be)."""
    import json

    if isinstance(value, RowsJSON):
        return rows_json(value.table)
    if type(value) is dict and all(type(k) is str for k in value):
        if any(isinstance(v, RowsJSON | dict) for v in value.values()):
            enc = json.encoder.encode_basestring
            return "{" + ", ".join(f"{enc(k)}: {dumps_json(v)}" for k, v in value.items()) + "}"
    return json.dumps(finite(value), ensure_ascii=False, allow_nan=False)


def rows_json(table: Table) -> str:
    """`json.dumps(finite(table.as_dicts()), ensure_ascii=False, allow_nan=False)`, byte for byte: each column's
    cells encoded at once (str, int and finite float as the json module writes them, NaN and inf as null, any
    other value by json.dumps itself), then a row's text from one format string."""
    import json

    cols, rows = table.columns, table.rows
    if not rows:
        return "[]"
    if len(set(cols)) != len(cols) or any(len(r) != len(cols) for r in rows) or not cols:
        return json.dumps(finite(table.as_dicts()), ensure_ascii=False, allow_nan=False)  # (its error, or dict's rule)
    enc = json.encoder.encode_basestring
    template = "{" + ", ".join(enc(c).replace("%", "%%") + ": %s" for c in cols) + "}"
    encoded = [_cells_json(list(col)) for col in zip(*rows, strict=True)]
    return "[" + ", ".join(map(template.__mod__, zip(*encoded, strict=True))) + "]"


def _cells_json(values: list[object]) -> list[str]:
    import json
    import math

    types = set(map(type, values))
    if types == {str}:
        return list(map(json.encoder.encode_basestring, values))  # type: ignore[arg-type]
    if types == {float} and all(map(math.isfinite, values)):  # type: ignore[arg-type]
        return list(map(float.__repr__, values))
    if types == {int}:
        return list(map(int.__repr__, values))
    return [_cell_json(v) for v in values]


def _cell_json(v: object) -> str:
    import json
    import math

    t = type(v)
    if t is str:
        return json.encoder.encode_basestring(v)  # type: ignore[arg-type]
    if v is None:
        return "null"
    if t is float:
        return float.__repr__(v) if math.isfinite(v) else "null"  # type: ignore[arg-type]
    if t is int:
        return int.__repr__(v)
    if t is bool:
        return "true" if v else "false"
    return json.dumps(finite(v), ensure_ascii=False, allow_nan=False)
