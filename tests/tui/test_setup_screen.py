from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from textual.widgets import OptionList, Select

from ebtui.tui.screens.setup import SetupScreen
from ebtui.tui.widgets.dilemma_card import DilemmaCard
from tests.support.factories import make_dilemmas
from tests.support.tui_helpers import wait_until


async def test_setup_lists_dilemmas_and_previews_the_selected_one(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        assert screen.query_one("#dilemma-list", OptionList).option_count == 2
        # the preview and the options come in the frames after the list's first one
        await wait_until(lambda: screen.options_ready and any(c.source for c in screen.query(DilemmaCard)))
        card = screen.query_one(DilemmaCard)
        assert "The Lighthouse Keeper's Log" in card.source
        assert "A nurse is asked to back-date a chart" in card.source  # the full dilemma, not a summary
        await pilot.press("down")
        await pilot.pause()
        assert "Seed Vault Access" in card.source
        # the default model is preselected for every role
        assert [screen.query_one(f"#{r}", Select).value for r in ("team-a", "team-b", "judge")] == ["scripted"] * 3


async def test_opening_a_bad_document_is_a_notification_not_a_crash(make_app, tmp_path: Path) -> None:
    bad = tmp_path / "not-a-docx.docx"
    bad.write_text("this is not a zip file")
    app = make_app(load_document=_real_loader)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+o")
        await pilot.pause()
        field = app.screen.query_one("#doc-path")
        field.value = str(bad)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, SetupScreen)
        messages = [n.message for n in app._notifications]
        assert any("not-a-docx.docx" in m for m in messages), messages
        assert app.screen.query_one("#dilemma-list", OptionList).option_count == 2  # the old list stays


async def test_opening_another_document_replaces_the_list(make_app, public_dilemmas_path: Path) -> None:
    app = make_app(load_document=_real_loader)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+o")
        await pilot.pause()
        app.screen.query_one("#doc-path").value = str(public_dilemmas_path)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        count = screen.query_one("#dilemma-list", OptionList).option_count
        assert count > 2
        assert public_dilemmas_path.name in str(screen.query_one("#document-label").render())
        assert app.services.document == public_dilemmas_path


def _real_loader(path):
    from ebtui.core.dilemmas import load_dilemmas

    return load_dilemmas(path)


async def test_the_screen_paints_before_the_document_is_read(make_app) -> None:
    release = threading.Event()

    def slow_loader(path):
        assert path is None  # the built-in document
        assert release.wait(20)
        return make_dilemmas()

    app = make_app(dilemmas=None, load_document=slow_loader)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SetupScreen) and screen.document_loading
        assert "Loading dilemmas" in str(screen.query_one("#document-label").render())
        await pilot.press("ctrl+r")  # too early: a message, not a crash
        await pilot.pause()
        assert isinstance(app.screen, SetupScreen)
        assert any("still loading" in n.message for n in app._notifications)
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.query_one("#dilemma-list", OptionList).option_count == 2
        assert app.services.dilemmas is not None and not screen.document_loading
        assert "The Lighthouse Keeper's Log" in screen.query_one(DilemmaCard).source
        assert not any("Loaded" in n.message for n in app._notifications)  # the app's own document: no toast


def test_model_labels_say_provider_and_model_once() -> None:
    from ebtui.core.usecases.models import model_detail

    assert model_detail("scripted", "scripted", "scripted") == ""
    assert model_detail("prose-judge", "scripted", None) == "scripted"
    assert model_detail("claude", "anthropic", "claude-sonnet-4-6") == "anthropic/claude-sonnet-4-6"
    assert model_detail("gpt", "openai", "openai") == "openai"


async def test_the_picker_shows_the_name_then_the_detail_dimmed(make_app) -> None:
    app = make_app()
    app.services.choices = replace(app.services.choices, details={"local": "local/echo-1", "scripted": ""})
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await wait_until(lambda: app.screen.options_ready)  # the options come after the list's first frame
        select = app.screen.query_one("#team-a", Select)
        labels = {value: label for label, value in select._options}
        assert labels["local"].plain == "local  local/echo-1"
        assert [span.style for span in labels["local"].spans] == ["dim"]
        assert labels["scripted"].plain == "scripted"


async def test_a_key_before_the_options_frame_makes_the_options_at_once(make_app) -> None:
    """The options column comes after the list's first frame; enter on the list before then still moves to the
    Team A picker (made there and then), and ctrl+r still starts the round with the preset models."""
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        await screen._selected()  # what enter on the list runs, whether or not the options' frame has come
        assert screen.options_ready
        await pilot.pause()  # focus moves in a message
        assert app.focused is screen.query_one("#team-a", Select)
        assert len(screen.query("#options Select")) == 3  # made once, not twice
        await screen._mount_options()
        assert len(screen.query("#options Select")) == 3
        await pilot.press("ctrl+r")
        await wait_until(lambda: type(app.screen).__name__ != "SetupScreen")
