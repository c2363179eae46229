"""A dilemma in full, as Markdown (the document's text, control sequences removed)."""

from __future__ import annotations

from textual.widgets import Markdown

from ebtui.core.records import Dilemma
from ebtui.core.safe_text import strip_control


def dilemma_markdown(d: Dilemma) -> str:
    s = strip_control
    parts = [f"# {s(d.title) or s(d.id)}"]
    meta = [s(d.category)] if d.category else []
    meta += [f"{s(k)}: {s(v)}" for k, v in d.metadata.items()]
    meta.append(f"id `{s(d.id)}`")
    parts.append("*" + " · ".join(m for m in meta if m) + "*")
    if d.core_scenario:
        parts += ["## Scenario", s(d.core_scenario)]
    if d.complications:
        parts += ["## Complications", "\n".join(f"- {s(c)}" for c in d.complications)]
    if d.questions:
        parts += ["## Questions", "\n".join(f"{i}. {s(q)}" for i, q in enumerate(d.questions, 1))]
    if d.asymmetric_features:
        parts += ["## Asymmetric features", "\n".join(f"- {s(a)}" for a in d.asymmetric_features)]
    if d.consistency_case:
        parts += ["## Consistency case", s(d.consistency_case)]
    return "\n\n".join(parts)


class DilemmaCard(Markdown):
    """Shows one dilemma; `show(None)` shows a hint instead."""

    DEFAULT_CSS = """
    DilemmaCard { padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("", id=id, classes=classes, open_links=False)

    def show(self, dilemma: Dilemma | None) -> None:
        self.update(dilemma_markdown(dilemma) if dilemma else "*No dilemma selected.*")
