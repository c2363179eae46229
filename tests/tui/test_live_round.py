from __future__ import annotations

import asyncio
import time

from tui_helpers import events_from_round, fixed_round

from ebtui.core.events import PhaseFinished, PhaseRetrying, PhaseStarted, RoundFinished, TextDelta
from ebtui.core.records import PHASE_ORDER, PhaseStatus, PhaseType
from ebtui.tui.screens.live import LiveRoundScreen
from ebtui.tui.screens.score import ScoreCardScreen
from ebtui.tui.widgets.role_pane import PhaseView, RolePane


async def _wait_until(predicate, timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.05)


async def test_a_scripted_round_streams_in_three_panes_and_is_saved(make_app, store) -> None:
    app = make_app()
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LiveRoundScreen)
        await _wait_until(lambda: screen.state != "running")
        assert screen.state == "finished"
        views = {v.phase_type: v for v in screen.query(PhaseView)}
        assert set(views) == set(PHASE_ORDER)
        for pt, view in views.items():
            assert view.status == PhaseStatus.COMPLETE, pt
            assert view.text.strip(), pt  # each pane shows its text
        assert screen.round is not None
        saved = store.query()
        assert [e["id"] for e in saved] == [screen.round.id]
        assert saved[0]["status"] == "complete"
        assert store.round_path(screen.round.id).exists()
        # the status line shows tokens
        status = str(screen.query_one("#pane-b", RolePane).query_one(".pane-status").render())
        assert "tok" in status and "Response" in status
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, ScoreCardScreen)


async def test_response_and_consistency_stream_at_the_same_time(make_app) -> None:
    app = make_app(tokens_per_second=300)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        screen = app.screen
        both = (PhaseType.RESPONSE, PhaseType.CONSISTENCY_TEST)
        seen_together = False
        panes_active = False

        def check() -> bool:
            nonlocal seen_together, panes_active
            running = {v.phase_type for v in screen.query(PhaseView) if v.status == PhaseStatus.RUNNING}
            if set(both) <= running:
                seen_together = True
                # Team A answers the consistency test while Team B responds: both panes show as active
                # (their status is refreshed by the screen's pump, so this may take a pump or two)
                panes_active = panes_active or (
                    screen.query_one("#pane-a").has_class("-active") and screen.query_one("#pane-b").has_class("-active")
                )
            return (seen_together and panes_active) or screen.state != "running"

        await _wait_until(check, timeout=30)
        assert seen_together
        assert panes_active
        screen.action_cancel_round()


async def test_cancel_saves_the_round_as_incomplete(make_app, store) -> None:
    app = make_app(tokens_per_second=100)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        screen = app.screen
        await _wait_until(lambda: screen.round_id is not None and any(v.tokens > 5 for v in screen.query(PhaseView)))
        await pilot.press("x")
        await _wait_until(lambda: screen.state == "cancelled")
        await app.workers.wait_for_complete()
        await pilot.pause()
        cancelled = [v for v in screen.query(PhaseView) if v.status == PhaseStatus.CANCELLED]
        assert cancelled
        entries = store.query()
        assert len(entries) == 1 and entries[0]["status"] == "incomplete"


async def test_a_retry_clears_the_phase_and_says_so(make_app) -> None:
    round_ = fixed_round()
    presentation = round_.phase(PhaseType.PRESENTATION)
    retry_now, finish_now = asyncio.Event(), asyncio.Event()

    async def events():
        yield PhaseStarted(round_.id, PhaseType.PRESENTATION, "scripted")
        yield TextDelta(round_.id, PhaseType.PRESENTATION, "doomed partial text ")
        await retry_now.wait()
        yield PhaseRetrying(round_.id, PhaseType.PRESENTATION, 2, "server (HTTP 503): overloaded", 0.5)
        await finish_now.wait()
        yield PhaseFinished(round_.id, presentation)
        yield RoundFinished(round_)

    app = make_app(run_round=lambda request, clients, store: events())
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        screen = app.screen
        view = screen.query_one("#phase-presentation", PhaseView)
        await _wait_until(lambda: view.tokens == 1)
        retry_now.set()
        await _wait_until(lambda: view.attempt == 2)
        await pilot.pause()
        note = str(view.query_one(".phase-note").render())
        assert "retrying (attempt 2)" in note and "overloaded" in note
        assert view.text == ""  # what streamed before the retry is void
        finish_now.set()
        await _wait_until(lambda: screen.state == "finished")
        assert view.text == presentation.response


async def test_replayed_round_fills_every_pane(make_app) -> None:
    round_ = fixed_round()
    app = make_app(run_round=lambda request, clients, store: events_from_round(round_))
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        screen = app.screen
        await _wait_until(lambda: screen.state == "finished")
        for phase in round_.phases:
            assert screen.view(phase.phase_type).text == phase.response


def test_cut_points_respect_code_fences_and_indented_lines() -> None:
    from ebtui.tui.widgets.role_pane import _cut_point

    assert _cut_point("", "one\n\ntwo") == 5
    assert _cut_point("", "no blank line") is None
    assert _cut_point("", "para\n\n    indented code") is None  # the next line continues a block
    fenced = "```\ncode\n\nmore code\n```\n\nafter"
    assert fenced[_cut_point("", fenced):] == "after"  # not inside the fence
    assert _cut_point("```python\n", "x = 1\n\ny = 2") is None  # a fence opened earlier is still open


async def test_a_long_phase_streams_into_sealed_segments_and_keeps_its_text(make_app) -> None:
    from ebtui.tui.widgets.role_pane import SEGMENT_BLOCKS, SealedMarkdown

    paragraphs = [f"Paragraph {i}: the keeper weighs **duty** against *mercy*." for i in range(3 * SEGMENT_BLOCKS)]
    long_text = "## A long presentation\n\n" + "\n\n".join(paragraphs) + "\n\n- one\n- two\n"
    round_ = fixed_round(texts={"presentation": long_text})
    app = make_app(run_round=lambda request, clients, store: events_from_round(round_, pause=0.01))
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        screen = app.screen
        await _wait_until(lambda: screen.state == "finished", timeout=60)
        view = screen.view(PhaseType.PRESENTATION)
        sealed = list(view.query(SealedMarkdown))
        assert sealed, "a long phase is sealed into once-rendered segments"
        assert view.text == long_text  # streamed in pieces, the same text as the answer of record
        assert len(view.markdown.children) <= SEGMENT_BLOCKS + 2  # the live segment stays small
        blocks = len(list(view.walk_children()))
        assert blocks < 2 * SEGMENT_BLOCKS + 20, blocks  # the DOM does not grow with the text
        shown = "".join(s.source for s in sealed) + view.markdown.source
        assert shown == long_text


async def test_the_footer_drops_cancel_once_the_round_is_over(make_app) -> None:
    round_ = fixed_round()
    go_on = asyncio.Event()

    async def events():
        yield PhaseStarted(round_.id, PhaseType.PRESENTATION, "scripted")
        await go_on.wait()
        async for event in events_from_round(round_):
            yield event

    app = make_app(run_round=lambda request, clients, store: events())
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        screen = app.screen
        await _wait_until(lambda: screen.round_id is not None)
        assert "cancel_round" in _footer_actions(screen) and "score_card" not in _footer_actions(screen)
        go_on.set()
        await _wait_until(lambda: screen.state == "finished")
        await pilot.pause()
        actions = _footer_actions(screen)
        assert "cancel_round" not in actions and {"score_card", "back"} <= actions


def _footer_actions(screen) -> set[str]:
    """The screen's own actions the footer offers now (bindings whose check_action allows them)."""
    return {b.binding.action for b in screen.active_bindings.values() if b.node is screen and b.enabled}


async def _streaming_screen(pilot, app, go_on: asyncio.Event, round_) -> LiveRoundScreen:
    await pilot.pause()
    await pilot.press("ctrl+r")
    screen = app.screen
    assert isinstance(screen, LiveRoundScreen)
    await _wait_until(lambda: screen.view(PhaseType.PRESENTATION).tokens > 0)
    return screen


async def test_a_key_goes_ahead_of_queued_text_for_a_bounded_number_of_pumps(make_app) -> None:
    from ebtui.tui.screens import live
    from ebtui.tui.widgets.role_pane import PaneScroll

    round_ = fixed_round()
    go_on = asyncio.Event()

    async def events():
        yield PhaseStarted(round_.id, PhaseType.PRESENTATION, "scripted")
        yield TextDelta(round_.id, PhaseType.PRESENTATION, "first words ")
        await go_on.wait()

    app = make_app(run_round=lambda request, clients, store: events())
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await _streaming_screen(pilot, app, go_on, round_)
        view = screen.view(PhaseType.PRESENTATION)
        await _wait_until(lambda: view.text == "first words ")
        screen.query(PaneScroll).first().focus()
        await pilot.press("end")  # a key the focused pane handles still tells the screen
        assert screen._last_input > float("-inf")
        screen._last_input = time.monotonic()  # as if just pressed, however long the press took here
        # text queued just after the key waits: the pump skips its turn (at most MAX_SKIPS in a row)
        screen._inbox.append(TextDelta(round_.id, PhaseType.PRESENTATION, "more"))
        skipped = 0
        while "more" not in view.text:
            assert skipped <= live.MAX_SKIPS
            await screen._pump()
            skipped += 1
        assert 2 <= skipped <= live.MAX_SKIPS + 1  # skipped at least once, never more than the bound
        assert view.text == "first words more"
        # once the key is older than INPUT_QUIET_S, text goes straight through
        await asyncio.sleep(live.INPUT_QUIET_S + 0.05)
        screen._inbox.append(TextDelta(round_.id, PhaseType.PRESENTATION, " again"))
        await screen._pump()
        assert view.text == "first words more again"
        go_on.set()
        screen.action_cancel_round()


async def test_the_pane_follows_the_stream_until_the_reader_scrolls_up(make_app) -> None:
    from ebtui.tui.widgets.role_pane import PaneScroll

    round_ = fixed_round()
    go_on = asyncio.Event()
    paragraph = "The keeper weighs **duty** against *mercy*, and the village's safety against one life.\n\n"

    async def events():
        yield PhaseStarted(round_.id, PhaseType.PRESENTATION, "scripted")
        for _ in range(40):
            yield TextDelta(round_.id, PhaseType.PRESENTATION, paragraph)
        await go_on.wait()
        for _ in range(10):
            yield TextDelta(round_.id, PhaseType.PRESENTATION, paragraph)
        await asyncio.Event().wait()  # still running

    app = make_app(run_round=lambda request, clients, store: events())
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await _streaming_screen(pilot, app, go_on, round_)
        view = screen.view(PhaseType.PRESENTATION)
        body = screen.query_one("#pane-a").query_one(PaneScroll)
        await _wait_until(lambda: view.text.count("keeper") == 40)
        await pilot.pause()
        await _wait_until(lambda: body.max_scroll_y > 0 and body.scroll_y == body.max_scroll_y)
        body.focus()
        await pilot.press("home")  # the reader scrolls up to read: the stream must not pull them down
        await _wait_until(lambda: body.scroll_y == 0)
        go_on.set()
        await _wait_until(lambda: view.text.count("keeper") == 50)
        await pilot.pause()
        await asyncio.sleep(0.3)
        assert body.scroll_y == 0
        await pilot.press("end")  # back at the end: following again
        await _wait_until(lambda: body.scroll_y == body.max_scroll_y)
        screen.action_cancel_round()
