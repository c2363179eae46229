"""A horizontal bar chart drawn with Unicode block characters, no plotting dependency. Bars with the same
label are grouped; values are drawn to an eighth of a cell against a fixed scale, so two charts with the
same scale compare by eye. A missing value is shown as missing, never as a zero-length bar; labels pass
through `strip_control` and are rendered as plain Text, never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from ebtui.core.safe_text import strip_control
from ebtui.core.views import numbers as num

#: index i = a bar i/8 of a cell wide
EIGHTHS = " ▏▎▍▌▋▊▉"
FULL = "█"
SERIES_CLASSES = 4


@dataclass(frozen=True)
class Bar:
    label: str
    value: float | None
    series: str = ""


def bar_cells(value: float, minimum: float, maximum: float, width: int) -> str:
    """The bar for `value` on a track `width` cells wide, to the nearest eighth of a cell."""
    if width <= 0 or maximum <= minimum:
        return ""
    fraction = min(1.0, max(0.0, (value - minimum) / (maximum - minimum)))
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    return FULL * full + (EIGHTHS[rest] if rest else "")


def _fit(text: str, width: int) -> str:
    if len(text) <= width:
        return text.ljust(width)
    return text[: max(0, width - 1)] + "…"


class BarChart(Widget):
    DEFAULT_CSS = """
    BarChart { height: auto; padding: 0 1; }
    BarChart > .bar-chart--title { text-style: bold; }
    BarChart > .bar-chart--muted { color: $text-muted; }
    BarChart > .bar-chart--series-0 { color: $primary; }
    BarChart > .bar-chart--series-1 { color: $warning; }
    BarChart > .bar-chart--series-2 { color: $success; }
    BarChart > .bar-chart--series-3 { color: $accent; }
    """
    COMPONENT_CLASSES = {
        "bar-chart--title",
        "bar-chart--muted",
        *(f"bar-chart--series-{i}" for i in range(SERIES_CLASSES)),
    }

    def __init__(
        self,
        title: str = "",
        *,
        minimum: float = 0.0,
        maximum: float | None = None,
        value_spec: str = ".2f",  # a float format spec, shown through core.views.numbers
        empty_text: str = "No data yet.",
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's own parameter name
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.title = title
        self.minimum = minimum
        self.maximum = maximum
        self.value_spec = value_spec
        self.empty_text = empty_text
        self.bars: list[Bar] = []

    def set_data(self, bars: Sequence[Bar], *, title: str | None = None) -> None:
        self.bars = [Bar(strip_control(b.label), b.value, strip_control(b.series)) for b in bars]
        if title is not None:
            self.title = title
        self.refresh(layout=True)

    # -- drawing ------------------------------------------------------------------------------------
    def _style(self, name: str) -> Style:
        try:
            return self.get_component_rich_style(name)
        except Exception:  # not mounted (pure rendering in a unit test): plain text
            return Style()

    def scale_max(self) -> float:
        if self.maximum is not None:
            return self.maximum
        values = [b.value for b in self.bars if b.value is not None]
        return max(values, default=1.0) or 1.0

    def chart_lines(self, width: int) -> list[Text]:
        lines: list[Text] = []
        if self.title:
            lines.append(Text(strip_control(self.title), style=self._style("bar-chart--title")))
        if not self.bars:
            lines.append(Text(self.empty_text, style=self._style("bar-chart--muted")))
            return lines
        muted = self._style("bar-chart--muted")
        series_order: list[str] = []
        for b in self.bars:
            if b.series not in series_order:
                series_order.append(b.series)
        label_w = min(max(len(b.label) for b in self.bars), max(6, width // 3))
        series_w = max(len(s) for s in series_order)
        top = self.scale_max()
        values = [num.shown(b.value, self.value_spec) for b in self.bars if b.value is not None]
        value_w = max([len(v) for v in values] + [1])
        # label, space, series, space, track, space, value
        track_w = max(1, width - label_w - 1 - (series_w + 1 if series_w else 0) - 1 - value_w)
        previous = None
        for b in self.bars:
            line = Text(no_wrap=True, overflow="crop")
            line.append(_fit(b.label if b.label != previous else "", label_w) + " ")
            previous = b.label
            series_style = self._style(f"bar-chart--series-{series_order.index(b.series) % SERIES_CLASSES}")
            if series_w:
                line.append(b.series.ljust(series_w) + " ", style=muted)
            if b.value is None:
                line.append("missing".ljust(track_w), style=muted)
                line.append(" " + "—".rjust(value_w), style=muted)
            else:
                cells = bar_cells(num.rounded(b.value, 2), self.minimum, top, track_w)
                line.append(cells, style=series_style)
                line.append(" " * (track_w - len(cells)))
                line.append(" " + num.shown(b.value, self.value_spec).rjust(value_w))
            lines.append(line)
        axis_left = " " * (label_w + 1 + (series_w + 1 if series_w else 0))
        low = num.shown(self.minimum, self.value_spec).rstrip("0").rstrip(".") or "0"
        high = num.shown(top, self.value_spec).rstrip("0").rstrip(".") or "0"
        gap = max(1, track_w - len(low) - len(high))
        lines.append(Text(axis_left + low + " " * gap + high, style=muted, no_wrap=True, overflow="crop"))
        return lines

    def render(self) -> Text:
        return Text("\n").join(self.chart_lines(self.content_size.width or self.size.width or 60))

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return len(self.chart_lines(width))
