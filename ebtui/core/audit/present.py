"""The human audit's section as the report (Markdown, HTML) and the app's Analysis tab show it: "Calibrated to
N human-scored judgments", the model means on the human scale beside the judges' own, and each judge's bias."""

from __future__ import annotations

import html

from ebtui.core.audit.calibrate import Calibration
from ebtui.core.views import numbers as num


def title(cal: Calibration) -> str:
    return f"Calibrated to {cal.n_judgments} human-scored judgment{'' if cal.n_judgments == 1 else 's'}"


def _num(x: object, spec: str = ".2f") -> str:
    return num.shown(x, spec) if isinstance(x, int | float) else "—"


def _ci(lo: object, hi: object) -> str:
    return f"[{_num(lo)}, {_num(hi)}]" if lo is not None and hi is not None else "—"


def tables(cal: Calibration) -> list[tuple[str, list[str], list[list[str]]]]:
    """(caption, header, rows) of each table of the section (none when it is blank: `cal.reason` says why)."""
    if cal.reason:
        return []
    models = [[m["model"], _num(m["mean"]), _ci(m["ci_low"], m["ci_high"]), _num(m["judge_only_mean"]),
               _ci(m.get("judge_only_ci_low"), m.get("judge_only_ci_high")), _num(m.get("human_only_mean")),
               _ci(m.get("human_only_ci_low"), m.get("human_only_ci_high")), str(m["n_human"]),
               m.get("reason") or ""] for m in cal.models]
    judges = [[j["judge"], _num(j["bias"], "+.2f"), _ci(j["ci_low"], j["ci_high"]),
               _num(j.get("mean_difference"), "+.2f"), str(j["n"]), j.get("reason") or ""] for j in cal.judges]
    pairs = [[f"{p['a']} − {p['b']}", _num(p["diff"], "+.2f"), _ci(p["ci_low"], p["ci_high"]), p.get("reason") or ""]
             for p in cal.pairwise]
    return [
        ("Adjusted means on the human scale (PPI++), beside the judges' own and the human-scored sample's alone",
         ["model", "calibrated mean", "95% CI", "as judged", "95% CI", "human sample only", "95% CI",
          "human scores", "note"], models),
        ("Judge minus human (points; a preference the judges share for one model is not counted in it)",
         ["judge", "bias", "95% CI", "plain mean difference", "scores", "note"], judges),
        ("Pairwise differences on the human scale", ["pair", "difference", "95% CI", "note"], pairs),
    ]


def intro(cal: Calibration) -> str:
    if cal.reason:
        return f"Blank: {cal.reason}."
    return (f"{cal.n_scores} human scores of {cal.n_judgments} randomly drawn judgments (audits "
            f"{', '.join(cal.audits)}) correct the judges' scores of every judgment: each model's adjusted mean "
            "as if a person had scored every judgment (prediction-powered inference, PPI++; docs/STATISTICS.md).")


def markdown(cal: Calibration) -> str:
    out = [f"## {title(cal)}", "", intro(cal), ""]
    for caption, header, rows in tables(cal):
        out += [f"**{caption}**", "", "| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        out.append("")
    out += [f"- {n}" for n in cal.notes]
    return "\n".join(out).rstrip() + "\n"


def html_section(cal: Calibration) -> str:
    e = html.escape
    parts = [f'<section id="human-audit"><h2>{e(title(cal))}</h2><p>{e(intro(cal))}</p>']
    for caption, header, rows in tables(cal):
        parts.append(f"<table><caption>{e(caption)}</caption><thead><tr>"
                     + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr></thead><tbody>"
                     + "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
                     + "</tbody></table>")
    parts += [f"<p>{e(n)}</p>" for n in cal.notes]
    return "".join(parts) + "</section>"
