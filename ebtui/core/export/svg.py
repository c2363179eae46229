"""Inline SVG charts for the web report, written by hand (no plotting library, no script, no network): they
scale with the page (viewBox, width 100%) and every label is escaped."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from ebtui.core.views import numbers as num


def _e(text: object) -> str:
    from ebtui.core.safe_text import strip_control

    return escape(strip_control(str(text)), quote=True)


def _f(x: float) -> str:
    return num.fixed(x, 1)


@dataclass(frozen=True)
class IntervalRow:
    label: str
    value: float
    low: float | None
    high: float | None
    extra: float | None = None  # drawn as a cross (e.g. the raw mean)


def interval_chart(rows: Sequence[IntervalRow], *, lo: float, hi: float, title: str, axis: str,
                   zero: float | None = None, extra_label: str = "") -> str:
    """One row per entry: a dot at the value, a bar over its interval, an optional cross; an x axis from lo
    to hi with ticks; a vertical line at `zero` when given."""
    if not rows:
        return ""
    label_w, plot_w, right, row_h, top, bottom = 130.0, 370.0, 16.0, 26.0, 30.0, 44.0
    width = label_w + plot_w + right
    height = top + row_h * len(rows) + bottom

    def x(v: float) -> float:
        return label_w + (min(max(v, lo), hi) - lo) / (hi - lo) * plot_w

    out = [f'<svg class="chart" viewBox="0 0 {_f(width)} {_f(height)}" width="100%" style="max-width:{_f(width)}px" '
           f'role="img" '
           f'aria-label="{_e(title)}" xmlns="http://www.w3.org/2000/svg">',
           f'<title>{_e(title)}</title>']
    step = _tick_step(hi - lo)
    t = math.ceil(lo / step) * step
    y_axis = top + row_h * len(rows)
    while t <= hi + 1e-9:
        out.append(f'<line class="grid" x1="{_f(x(t))}" x2="{_f(x(t))}" y1="{_f(top - 6)}" y2="{_f(y_axis)}"/>'
                   f'<text class="tick" x="{_f(x(t))}" y="{_f(y_axis + 16)}" text-anchor="middle">{num.shown(t, "g")}</text>')
        t += step
    if zero is not None:
        out.append(f'<line class="zero" x1="{_f(x(zero))}" x2="{_f(x(zero))}" y1="{_f(top - 6)}" '
                   f'y2="{_f(y_axis)}"/>')
    for i, r in enumerate(rows):
        cy = top + row_h * i + row_h / 2
        label = r.label if len(r.label) <= 20 else r.label[:19] + "…"
        out.append(f'<text class="label" x="{_f(label_w - 8)}" y="{_f(cy + 4)}" text-anchor="end">'
                   f'<title>{_e(r.label)}</title>{_e(label)}</text>')
        if r.low is not None and r.high is not None:
            out.append(f'<line class="ci" x1="{_f(x(r.low))}" x2="{_f(x(r.high))}" y1="{_f(cy)}" y2="{_f(cy)}"/>'
                       f'<line class="ci" x1="{_f(x(r.low))}" x2="{_f(x(r.low))}" y1="{_f(cy - 5)}" '
                       f'y2="{_f(cy + 5)}"/><line class="ci" x1="{_f(x(r.high))}" x2="{_f(x(r.high))}" '
                       f'y1="{_f(cy - 5)}" y2="{_f(cy + 5)}"/>')
        if r.extra is not None:
            ex = x(r.extra)
            out.append(f'<path class="extra" d="M{_f(ex - 4)} {_f(cy - 4)}L{_f(ex + 4)} {_f(cy + 4)}'
                       f'M{_f(ex - 4)} {_f(cy + 4)}L{_f(ex + 4)} {_f(cy - 4)}"/>')
        out.append(f'<circle class="dot" cx="{_f(x(r.value))}" cy="{_f(cy)}" r="4.5">'
                   f'<title>{_e(r.label)}: {num.fixed(r.value)}</title></circle>')
    legend = "● estimate, bar: 95% interval" + (f", ✕ {extra_label}" if extra_label else "")
    out.append(f'<text class="axis" x="{_f(label_w + plot_w / 2)}" y="{_f(height - 8)}" text-anchor="middle">'
               f'{_e(axis)} — {_e(legend)}</text></svg>')
    return "".join(out)


def _tick_step(span: float) -> float:
    raw = span / 6 if span > 0 else 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return float(m * mag)
    return float(10 * mag)


def _colour(v: float, lo: float, hi: float) -> str:
    """A light-to-dark blue ramp (readable text on both ends is chosen by the caller)."""
    t = 0.0 if hi <= lo else min(max((v - lo) / (hi - lo), 0.0), 1.0)
    r, g, b = (int(a + (z - a) * t) for a, z in ((232, 24), (240, 72), (250, 140)))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(row_labels: Sequence[str], col_labels: Sequence[str], values: Sequence[Sequence[float | None]], *,
            title: str, lo: float = 1.0, hi: float = 10.0, row_axis: str = "", col_axis: str = "") -> str:
    """A grid of coloured cells with their values (blank: no value)."""
    if not row_labels or not col_labels:
        return ""
    label_w, cell_w, cell_h, top = 150.0, 64.0, 30.0, 92.0
    width = label_w + cell_w * len(col_labels) + 10
    height = top + cell_h * len(row_labels) + 30
    out = [f'<svg class="chart" viewBox="0 0 {_f(width)} {_f(height)}" width="100%" style="max-width:{_f(width)}px" '
           f'role="img" '
           f'aria-label="{_e(title)}" xmlns="http://www.w3.org/2000/svg"><title>{_e(title)}</title>']
    for j, c in enumerate(col_labels):
        cx = label_w + cell_w * j + cell_w / 2
        short = c if len(c) <= 14 else c[:13] + "…"
        out.append(f'<text class="tick" transform="translate({_f(cx)} {_f(top - 8)}) rotate(-35)">'
                   f'<title>{_e(c)}</title>{_e(short)}</text>')
    for i, rl in enumerate(row_labels):
        cy = top + cell_h * i
        short = rl if len(rl) <= 20 else rl[:19] + "…"
        out.append(f'<text class="label" x="{_f(label_w - 8)}" y="{_f(cy + cell_h / 2 + 4)}" text-anchor="end">'
                   f'<title>{_e(rl)}</title>{_e(short)}</text>')
        for j, v in enumerate(values[i]):
            x0 = label_w + cell_w * j
            if v is None or (isinstance(v, float) and math.isnan(v)):
                out.append(f'<rect class="empty" x="{_f(x0)}" y="{_f(cy)}" width="{_f(cell_w - 2)}" '
                           f'height="{_f(cell_h - 2)}"/>')
                continue
            fill = _colour(v, lo, hi)
            dark = (v - lo) / (hi - lo) > 0.55 if hi > lo else False
            out.append(f'<rect x="{_f(x0)}" y="{_f(cy)}" width="{_f(cell_w - 2)}" height="{_f(cell_h - 2)}" '
                       f'fill="{fill}"><title>{_e(rl)} / {_e(col_labels[j])}: {num.fixed(v)}</title></rect>'
                       f'<text class="cell{" on-dark" if dark else ""}" x="{_f(x0 + cell_w / 2 - 1)}" '
                       f'y="{_f(cy + cell_h / 2 + 4)}" text-anchor="middle">{num.fixed(v)}</text>')
    axes = " — ".join(a for a in (f"rows: {row_axis}" if row_axis else "", f"columns: {col_axis}" if col_axis
                                  else "") if a)
    if axes:
        out.append(f'<text class="axis" x="4" y="{_f(height - 8)}">{_e(axes)}</text>')
    out.append("</svg>")
    return "".join(out)


__all__ = ["IntervalRow", "heatmap", "interval_chart"]
