"""`ebtui report --html`: one self-contained page. Checked as a file (no script, nothing fetched, model text
escaped, every round linked, the model table's full-precision numbers equal `report --json`) and in a real
headless Chromium (Debian's package, driven by Playwright): no console error, no network request, no
horizontal overflow at phone and desktop widths, the numbers shown equal `report --json`."""

from __future__ import annotations

import math
import os
import shutil
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from ebtui.core.store import ResultsStore
from tests.support.export_support import invoke, report_json, shared_tournament

CHROMIUM = os.environ.get("EBTUI_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    info = shared_tournament()
    res = invoke("--store", str(info["root"]), "report", "--tournament", info["tid"], "--html")
    assert res.exit_code == 0, res.output
    path = Path(res.stdout.strip())
    assert path == info["root"] / "reports" / info["tid"] / "report.html"
    return {**info, "path": path, "html": path.read_text(encoding="utf-8"),
            "json": report_json(info["root"], info["tid"])}


class _Collect(HTMLParser):
    """Tags with their attributes, the text of each table cell, and the rows of the tables by id."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: dict[str, list[list[tuple[str, str | None]]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._value: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table" and a.get("id"):
            self._table = a["id"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell, self._value = [], a.get("data-value")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table:
            self.tables[self._table][-1].append(("".join(self._cell), self._value))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _parse(html: str) -> _Collect:
    p = _Collect()
    p.feed(html)
    return p


def _check_models(rows: list[list[tuple[str, str | None]]], want: list[dict[str, Any]]) -> None:
    header = [text for text, _ in rows[0]]
    body = rows[1:]
    assert len(body) == len(want) == 4
    for row, w in zip(body, want, strict=True):
        cells = dict(zip(header, row, strict=True))
        assert cells["model"][0] == w["model"]
        for col in ("mean", "ci_low", "ci_high", "raw_mean", "n_rounds", "n_scores"):
            text, value = cells[col]
            if w[col] is None:
                assert text == "" and value is None, (col, text)
                continue
            assert value is not None and math.isclose(float(value), w[col], abs_tol=1e-9), (col, value, w[col])
            shown = f"{w[col]:.2f}" if isinstance(w[col], float) else str(w[col])
            assert text == shown, (col, text, shown)


def test_the_page_is_self_contained_and_model_text_is_inert(page_file: dict[str, Any]) -> None:
    html = page_file["html"]
    p = _parse(html)
    assert not any(tag in ("script", "iframe", "object", "embed", "link", "img", "base") for tag, _ in p.tags)
    for tag, attrs in p.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            if name in ("href", "src", "action", "srcset"):
                assert value is not None and value.startswith("#"), (tag, name, value)
    assert "<script>console.error" not in html and "&lt;script&gt;console.error(&#x27;xss&#x27;)" in html
    assert "\x1b" not in html
    csp = next(a["content"] for t, a in p.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert csp is not None and "default-src 'none'" in csp


def test_every_round_is_linked_with_its_transcript_and_scores(page_file: dict[str, Any]) -> None:
    p = _parse(page_file["html"])
    ids = {a["id"] for _, a in p.tags if a.get("id")}
    links = {a["href"][1:] for t, a in p.tags if t == "a" and (a.get("href") or "").startswith("#")}
    assert links <= ids, links - ids
    rounds = ResultsStore(page_file["root"]).load_rounds(tournament=page_file["tid"])
    html = page_file["html"]
    for r in rounds:
        assert {f"round-{r.id}", f"scores-{r.id}"} <= ids & links, r.id
        # the round's anchor opens the article holding its transcript, its scores link its judgment
        article = html.split(f'id="round-{r.id}"', 1)[1].split("</article>", 1)[0]
        for phase in r.phases:
            if phase.response and "console.error" not in phase.response:
                assert escape(phase.response) in article, (r.id, phase.phase_type)
        card = html.split(f'id="scores-{r.id}"', 1)[1].split("</section>", 1)[0]
        if r.judgment is not None:
            eff = {t: r.judgment.effective_scores(t).as_dict() for t in "ab"}
            for team in "ab":
                for crit, value in eff[team].items():
                    shown = "—" if value is None else str(value)
                    assert f'data-team="{team}" data-criterion="{crit}">{shown}' in card, (r.id, team, crit)
    # a panel's shared transcript is written once per exchange, not once per round
    panel = [r for r in rounds if (r.exchange_id or r.id) == (rounds[1].exchange_id or rounds[1].id)]
    assert len(panel) == 2
    article = html.split(f'id="round-{panel[0].id}"', 1)[1].split("</article>", 1)[0]
    presentation = next(p.response for p in panel[1].phases if p.phase_type == "presentation")
    assert article.count(escape(presentation)) == 1 and f'id="scores-{panel[1].id}"' in article


def test_the_model_table_equals_report_json(page_file: dict[str, Any]) -> None:
    p = _parse(page_file["html"])
    _check_models(p.tables["table-models-as_judged"], page_file["json"]["models"])
    _check_models(p.tables["table-models-effective"], page_file["json"]["with_overrides"]["models"])
    for key in page_file["json"]:  # every table of the report data is on the page
        if isinstance(page_file["json"][key], list) and key not in ("criteria", "imported") and \
                page_file["json"][key] and isinstance(page_file["json"][key][0], dict):
            table = {"order": "judge_order", "agreement_bias": "agreement_with_own_view"}.get(key, key)
            assert f"table-{table}-" in page_file["html"], key


def _browser() -> Any:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser test needs playwright: "
                                                                 "pip install -e '.[test]'")
    if not (shutil.which(CHROMIUM) or Path(CHROMIUM).is_file()):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set EBTUI_CHROMIUM)")
    return sync_api


def _listen(page: Any) -> tuple[list[str], list[str]]:
    """Console errors and warnings, uncaught exceptions, and every request the page makes."""
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    return errors, requests


def test_in_headless_chromium(page_file: dict[str, Any]) -> None:
    sync_api = _browser()
    url = page_file["path"].resolve().as_uri()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-extensions"])
        try:
            for width, height in ((375, 740), (1280, 900)):
                page = browser.new_page(viewport={"width": width, "height": height})
                errors, requests = _listen(page)
                page.goto(url, wait_until="load")
                page.wait_for_timeout(200)
                assert errors == [], errors
                assert requests == [url], requests  # the page itself, nothing else
                overflow = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
                assert overflow[0] <= overflow[1], f"horizontal overflow at {width}px: {overflow}"
                rows = page.evaluate(
                    """() => [...document.querySelectorAll('#table-models-as_judged tr')].map(tr =>
                        [...tr.children].map(c => [c.textContent, c.getAttribute('data-value')]))""")
                _check_models([[(t, v) for t, v in row] for row in rows], page_file["json"]["models"])
                # a round is one link away, its transcript visible
                first = page.locator("#round-index a").first
                target = first.get_attribute("href")
                first.click()
                assert page.evaluate("location.hash") == target
                assert page.locator(f"article:has({target}) pre.text").first.is_visible()
                scores = page.locator("#round-index a[href^='#scores-']").first
                scores.click()
                assert page.locator(f"{scores.get_attribute('href')} table.scores").is_visible()
                page.close()
        finally:
            browser.close()
