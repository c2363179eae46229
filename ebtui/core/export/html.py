"""The web report (`ebtui report --html`): one self-contained HTML file with what report.md holds plus every
round's transcript and score card. No network is needed or allowed (inline styles and SVG, no script, a
Content-Security-Policy); model text is stripped of control sequences and HTML-escaped.
See docs/EXPORTS.md, "The web report".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape
from pathlib import Path

from ebtui.core import analysis as an
from ebtui.core.analysis import Table
from ebtui.core.export.svg import IntervalRow, heatmap, interval_chart
from ebtui.core.export.tidy import round_judgments
from ebtui.core.facts import exchange_key
from ebtui.core.records import CRITERIA, CRITERION_LABELS, PHASE_ORDER, Phase, PhaseType, Round, Tournament
from ebtui.core.report import (
    SECTIONS,
    VIEW_HEADINGS,
    ReportData,
    build_report_data,
    criteria_wide,
    format_cell,
)
from ebtui.core.safe_text import strip_control
from ebtui.core.views.phases import PHASE_LABELS, speaker_label
from ebtui.core.views.scores import score_grid

CSS = """
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0 auto;max-width:76rem;padding:1rem;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;
color:#1b1f24;background:#fff;overflow-wrap:anywhere}
h1{font-size:1.6rem;margin:.2rem 0 .6rem}h2{margin-top:2.2rem;border-bottom:1px solid #d0d7de}
h3{margin-top:1.6rem}h4{margin:1rem 0 .3rem}
nav ul{display:flex;flex-wrap:wrap;gap:.3rem .9rem;padding:0;list-style:none}
a{color:#0b5cad}
.scroll{overflow-x:auto;max-width:100%;margin:.4rem 0 1rem}
table{border-collapse:collapse;font-size:.86rem}
th,td{border:1px solid #d0d7de;padding:.25rem .45rem;vertical-align:top;overflow-wrap:normal}
th{background:#f3f5f8;text-align:left;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.text{min-width:12rem;overflow-wrap:anywhere}
table[id^="table-"] td:first-child{white-space:nowrap}
.notes{font-size:.82rem;color:#4a5360}
.chart{max-width:46rem;height:auto;display:block;margin:.5rem 0}
.chart text{font:13px system-ui,sans-serif;fill:#1b1f24}
.chart .tick{fill:#57606a}.chart .grid{stroke:#e4e8ec}.chart .zero{stroke:#8c959f;stroke-dasharray:3 3}
.chart .ci{stroke:#0b5cad;stroke-width:2}.chart .dot{fill:#0b5cad}.chart .extra{stroke:#8c959f;stroke-width:1.6}
.chart .empty{fill:#f3f5f8}.chart .cell{font-size:11px}.chart .on-dark{fill:#fff}
pre.text{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;border:1px solid #e4e8ec;
padding:.6rem;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;max-height:32rem;overflow-y:auto}
article.round{border-top:2px solid #d0d7de;margin-top:1.8rem}
.meta{font-size:.88rem;color:#4a5360}
.missing{color:#a40e26;font-weight:600}.over{color:#8250df;font-weight:600}
.back{font-size:.85rem}
@media (max-width:640px){body{padding:.6rem;font-size:14px}h1{font-size:1.3rem}table{font-size:.8rem}}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _e(text: object) -> str:
    """Untrusted text made inert for HTML (content and attribute values alike)."""
    return escape(strip_control("" if text is None else str(text)), quote=True)


def _anchor(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text)


def round_anchor(round_id: str) -> str:
    return f"round-{_anchor(round_id)}"


def score_anchor(round_id: str) -> str:
    return f"scores-{_anchor(round_id)}"


def table_id(t: Table) -> str:
    return f"table-{_anchor(t.key)}-{_anchor(t.view)}"


def _cell(value: object, column: str, text_columns: frozenset[str]) -> str:
    if isinstance(value, bool):
        return f"<td>{_e(value)}</td>"
    if isinstance(value, int | float):
        shown = format_cell(value, column)
        return f'<td class="num" data-value="{value!r}">{_e(shown)}</td>'
    cls = ' class="text"' if column in text_columns else ""
    return f"<td{cls}>{_e(format_cell(value, column))}</td>"  # type: ignore[arg-type]


def render_table(t: Table, shown: Table | None = None) -> str:
    s = shown or t
    head = "".join(f'<th scope="col">{_e(c)}</th>' for c in s.columns)
    body = "".join("<tr>" + "".join(_cell(v, c, s.text_columns) for v, c in zip(row, s.columns, strict=True))
                   + "</tr>" for row in s.rows)
    if not s.rows:
        body = f'<tr><td colspan="{len(s.columns)}">no rows</td></tr>'
    out = [f'<h4>{_e(t.title)} — {_e(VIEW_HEADINGS.get(t.view, t.view))}</h4>']
    if t.coverage is not None:
        out.append(f'<p class="notes">Left out as missing: {_e(t.coverage.describe())}.</p>')
    out.append(f'<div class="scroll"><table id="{table_id(t)}" data-key="{_e(t.key)}" data-view="{_e(t.view)}">'
               f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")
    if t.notes:
        out.append('<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in t.notes) + "</ul>")
    return "".join(out)


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def charts_for(key: str, t: Table) -> str:
    rows = t.as_dicts()
    if key == "models":
        ivs = [IntervalRow(str(r["model"]), float(r["mean"]), _num(r["ci_low"]), _num(r["ci_high"]),  # type: ignore[arg-type]
                           _num(r["raw_mean"])) for r in rows if _num(r["mean"]) is not None]
        ivs.sort(key=lambda r: -r.value)
        return interval_chart(ivs, lo=1, hi=10, title="Adjusted mean per model with 95% intervals",
                              axis="score (1-10)", extra_label="raw mean")
    if key == "judges":
        ivs = [IntervalRow(str(r["judge"]), float(r["offset"]), _num(r["ci_low"]), _num(r["ci_high"]))  # type: ignore[arg-type]
               for r in rows if _num(r["offset"]) is not None]
        if not ivs:
            return ""
        span = max(1.0, *(abs(v) for r in ivs for v in (r.value, r.low or 0.0, r.high or 0.0)))
        return interval_chart(ivs, lo=-span, hi=span, zero=0.0, title="Judge offsets from the average judge",
                              axis="offset (negative = harsh)")
    if key == "cross_model" and len(t.columns) > 1:
        return heatmap([str(r[0]) for r in t.rows], [str(c) for c in t.columns[1:]],
                       [[_num(v) for v in r[1:]] for r in t.rows], title="Cross-model matrix: Team A mean score",
                       row_axis="Team A model", col_axis="Team B model")
    if key == "criteria_by_model":
        wide = criteria_wide(t)
        return heatmap([str(r[0]) for r in wide.rows], [CRITERION_LABELS[c] for c in CRITERIA],
                       [[_num(v) for v in r[1:1 + len(CRITERIA)]] for r in wide.rows],
                       title="Raw mean per model and criterion", row_axis="model", col_axis="criterion")
    return ""


def _score_card(r: Round) -> str:
    js = round_judgments(r)
    if not js:
        return '<p class="missing">No judgment: the judge did not score this round.</p>'
    out: list[str] = []
    for index, j in enumerate(js):
        g = score_grid(j)
        if len(js) > 1:
            out.append(f"<h4>Judgment {index} — {_e(j.judge_model or r.judge_model)}</h4>")
        rows = []
        for crit in CRITERIA:
            cells = []
            for team in ("a", "b"):
                c = g.cell(team, crit)
                parsed = "—" if c.parsed is None else str(c.parsed)
                value = "—" if c.value is None else str(c.value)
                cls = "over" if c.override else ("missing" if c.value is None else "")
                review = " (to review)" if c.review == "open" else ""
                cells.append(f'<td class="num">{_e(parsed)}</td><td class="num {cls}" data-team="{team}" '
                             f'data-criterion="{crit}">{_e(value)}{review}</td><td>{_e(c.kind)}</td>')
            rows.append(f"<tr><th scope=\"row\">{_e(CRITERION_LABELS[crit])}</th>{''.join(cells)}</tr>")
        tot = (f'<tr><th scope="row">Total</th><td class="num">{_e(g.parsed_totals["a"] or "—")}</td>'
               f'<td class="num">{_e(g.totals["a"] or "—")}</td><td></td><td class="num">'
               f'{_e(g.parsed_totals["b"] or "—")}</td><td class="num">{_e(g.totals["b"] or "—")}</td><td></td></tr>')
        out.append('<div class="scroll"><table class="scores"><thead><tr><th>criterion</th><th>A parsed</th>'
                   "<th>A</th><th>A read as</th><th>B parsed</th><th>B</th><th>B read as</th></tr></thead>"
                   f"<tbody>{''.join(rows)}{tot}</tbody></table></div>")
        notes = [f"Override, Team {team.upper()} {CRITERION_LABELS[crit]}: {ov.parsed_value} → {ov.value}"
                 + (f" ({ov.note})" if ov.note else "") for (team, crit), ov in sorted(j.active_overrides().items())]
        notes += [("[open] " if not item.addressed else "[done] ") + item.reason.message for item in g.items]
        if notes:
            out.append('<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
        for label, text in (("Team A", j.team_a_justification), ("Team B", j.team_b_justification),
                            ("Overall", j.overall_analysis)):
            if text:
                out.append(f'<p class="meta"><b>{label}:</b> {_e(text)}</p>')
    return "".join(out)


def _phase(p: Phase) -> str:
    bits = [str(p.status)]
    if p.usage.input_tokens or p.usage.output_tokens:
        bits.append(f"{p.usage.input_tokens}→{p.usage.output_tokens} tokens")
    out = (f"<h4>{_e(PHASE_LABELS[p.phase_type])} — {_e(speaker_label(p.phase_type))} ({_e(p.model_id)})</h4>"
           f'<p class="meta">{_e(", ".join(bits))}' + (f" — {_e(p.error)}" if p.error else "") + "</p>")
    if p.response:
        out += f'<pre class="text">{_e(p.response)}</pre>'
    return out


def render_exchange(rounds: Sequence[Round]) -> str:
    """One exchange: its transcript once (a judge panel's rounds share phases 1-4), then each round's
    judgment and score card. Every round's anchor (#round-<id>) sits at the top, on the transcript; its
    score card is #scores-<id>."""
    rounds = sorted(rounds, key=lambda r: (r.timestamp, r.id))
    first = rounds[0]
    order = {pt: i for i, pt in enumerate(PHASE_ORDER)}
    anchors = "".join(f'<span class="anchor" id="{round_anchor(r.id)}"></span>' for r in rounds)
    title = "Round" if len(rounds) == 1 else f"Exchange of {len(rounds)} rounds"
    parts = [f'<article class="round" id="exchange-{_anchor(exchange_key(first))}">{anchors}'
             f"<h3>{title}: {_e(first.dilemma_title or first.dilemma_id)}</h3>"
             f'<p class="meta">Team A {_e(first.team_a_model)} · Team B {_e(first.team_b_model)} · '
             + " · ".join(f'<a href="#{score_anchor(r.id)}">{_e(r.id)}</a>: judge {_e(r.judge_model)}, '
                          f"{_e(r.status)}" + (f" ({_e(r.error)})" if r.error else "") for r in rounds) + "</p>"]
    for pt in PHASE_ORDER[:-1]:  # phases 1-4: from the round that ran each itself
        found = [p for r in rounds if (p := r.phase(pt)) is not None]
        if found:
            parts.append(_phase(min(found, key=lambda p: (bool(p.reused_from), order[p.phase_type]))))
    for r in rounds:
        parts.append(f'<section class="judgment" id="{score_anchor(r.id)}"><h4>Round {_e(r.id)} — judge '
                     f"{_e(r.judge_model)}</h4>")
        jp = r.phase(PhaseType.JUDGMENT)
        if jp is not None:
            parts.append(_phase(jp))
        parts.append(_score_card(r) + "</section>")
    parts.append('<p class="back"><a href="#rounds">↑ all rounds</a></p></article>')
    return "".join(parts)


def _round_index(rounds: Sequence[Round]) -> str:
    rows = []
    for r in rounds:
        g = score_grid(r.judgment) if r.judgment is not None else None
        ta = "" if g is None or g.totals["a"] is None else str(g.totals["a"])
        tb = "" if g is None or g.totals["b"] is None else str(g.totals["b"])
        rows.append(f'<tr><td><a href="#{round_anchor(r.id)}">{_e(r.id)}</a></td>'
                    f'<td><a href="#{score_anchor(r.id)}">scores</a></td><td>{_e(r.dilemma_id)}</td>'
                    f"<td>{_e(r.team_a_model)}</td><td>{_e(r.team_b_model)}</td><td>{_e(r.judge_model)}</td>"
                    f'<td>{_e(r.status)}</td><td class="num">{ta}</td><td class="num">{tb}</td></tr>')
    return ('<div class="scroll"><table id="round-index"><thead><tr><th>round</th><th>scores</th><th>dilemma</th><th>Team A</th>'
            "<th>Team B</th><th>judge</th><th>status</th><th>total A</th><th>total B</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def adaptive_html(tournament: Tournament | None) -> str:
    """An adaptive tournament's section (ebtui.core.report.adaptive_tables): the rule, why it stopped, the looks
    and the anytime-valid pairwise intervals; "" for any other tournament."""
    from ebtui.core.report import adaptive_of, adaptive_tables

    summary = adaptive_of(tournament)
    return "" if summary is None else "".join(render_table(t) for t in adaptive_tables(summary))


def render_html_report(rounds: Sequence[Round], data: ReportData, *, title: str,
                       tournament: Tournament | None = None) -> str:
    rounds = sorted(rounds, key=lambda r: (r.timestamp, r.id))
    tables = data.tables
    statuses = Counter(str(r.status) for r in rounds)
    summary = [
        f"Rounds: {len(rounds)} (" + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
        + f"); exchanges: {len(an.exchanges(rounds))}",
        f"Models: {', '.join(an.models_in(rounds))}",
        f"Judges: {', '.join(sorted({r.judge_model for r in rounds}))}",
        f"Dilemmas: {len({r.dilemma_id for r in rounds})}",
        f"Excluded: {data.as_judged.excluded.describe()}",
        f"Generated: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
    ]
    if tournament is not None:
        summary.insert(0, f"Tournament: {tournament.name or tournament.id} (id {tournament.id}), "
                          f"status {tournament.status}")
    sections: list[tuple[str, str, str]] = []  # (anchor, heading, html)
    adaptive = adaptive_html(tournament)
    if adaptive:
        sections.append(("adaptive", "Adaptive tournament", adaptive))
    shown: set[str] = set()
    for heading, keys in SECTIONS:
        present = [k for k in keys if k in tables]
        if not present:
            continue
        parts: list[str] = []
        for key in present:
            shown.add(key)
            parts.append(charts_for(key, tables[key][0]))
            for t in tables[key]:
                parts.append(render_table(t, criteria_wide(t) if key == "criteria_by_model" else None))
        sections.append((_anchor(present[0]), heading, "".join(parts)))
    rest = [k for k in tables if k not in shown]
    if rest:
        sections.append(("more", f"{len(SECTIONS) + 1}. More tables",
                         "".join(charts_for(k, tables[k][0]) + "".join(render_table(t) for t in tables[k])
                                 for k in rest)))
    sections.append(("rounds", "Rounds", _round_index(rounds)
                     + "".join(render_exchange(ex.rounds) for ex in an.exchanges(rounds))))
    nav = "".join(f'<li><a href="#{a}">{_e(h)}</a></li>' for a, h, _ in sections)
    doc = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<header><h1>{_e(title)}</h1><ul class=\"meta\">"
        + "".join(f"<li>{_e(s)}</li>" for s in summary) + "</ul>",
        f'<nav aria-label="sections"><ul>{nav}</ul></nav></header><main>',
        f'<section id="how"><h2>How to read this report</h2><p>{_e(an.ADJUSTMENT_PARAGRAPH)}</p><p>A score the '
        "judge did not give is missing: it is left out of every mean and count, never treated as 0. Rounds "
        "without a judgment are left out. Numbers are rounded to 2 decimals here; each cell keeps the full "
        "value (data-value), and <code>ebtui report --json</code> prints them all.</p></section>",
    ]
    for a, h, body in sections:
        doc.append(f'<section id="{a}"><h2>{_e(h)}</h2>{body}</section>')
    doc.append("</main></body></html>")
    return "\n".join(doc)


def write_html_report(rounds: Sequence[Round], path: Path, *, data: ReportData | None = None, title: str,
                      tournament: Tournament | None = None) -> Path:
    """Write the web report to `path` (a directory: report.html inside it); return the file."""
    data = data or build_report_data(rounds)
    if path.suffix.lower() not in (".html", ".htm"):
        path = path / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html_report(rounds, data, title=title, tournament=tournament), encoding="utf-8")
    return path


__all__ = ["render_exchange", "render_html_report", "render_table", "round_anchor", "score_anchor", "table_id",
           "write_html_report"]
