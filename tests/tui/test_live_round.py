from __future__ import annotations

import asyncio

from ebtui.core.events import PhaseFinished, PhaseRetrying, PhaseStarted, RoundFinished, TextDelta
from ebtui.core.records import PHASE_ORDER, PhaseStatus, PhaseType
from ebtui.tui.screens.live import LiveRoundScreen
from ebtui.tui.screens.score import ScoreCardScreen
from ebtui.tui.widgets.role_pane import PhaseView, RolePane
from tests.support.factories import fixed_round
from tests.support.tui_helpers import (
    events_from_round,
    played_round,
    replayed_round,
    started_round,
    wait_until,
)


async def test_a_scripted_round_streams_in_three_panes_and_is_saved(make_app, store) -> None:
    app = make_app()
    async with played_round(app, timeout=20) as (pilot, screen):
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

        await wait_until(check, timeout=30)
        assert seen_together
        assert panes_active
        screen.action_cancel_round()


async def test_cancel_saves_the_round_as_incomplete(make_app, store) -> None:
    app = make_app(tokens_per_second=100)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        screen = app.screen
        await wait_until(lambda: screen.round_id is not None and any(v.tokens > 5 for v in screen.query(PhaseView)))
        await pilot.press("x")
        await wait_until(lambda: screen.state == "cancelled")
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

    async with started_round(make_app, events) as (pilot, screen):
        view = screen.query_one("#phase-presentation", PhaseView)
        await wait_until(lambda: view.tokens == 1)
        retry_now.set()
        await wait_until(lambda: view.attempt == 2)
        await pilot.pause()
        note = view.note_text
        assert "retrying (attempt 2)" in note and "overloaded" in note
        assert view.text == ""  # what streamed before the retry is void
        finish_now.set()
        await wait_until(lambda: screen.state == "finished")
        assert view.text == presentation.response


async def test_replayed_round_fills_every_pane(make_app) -> None:
    round_ = fixed_round()
    async with replayed_round(make_app, round_) as (_, screen):
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


async def test_a_long_phase_streams_append_only_and_keeps_its_text(make_app) -> None:
    """Streaming mounts no widget, renders each finished paragraph once and only the tail again, and shows
    exactly the transcript."""
    paragraphs = [f"Paragraph {i}: the keeper weighs **duty** against *mercy*." for i in range(30)]
    long_text = "## A long presentation\n\n" + "\n\n".join(paragraphs) + "\n\n- one\n- two\n"
    round_ = fixed_round(texts={"presentation": long_text})
    go_on = asyncio.Event()

    async def events():
        yield PhaseStarted(round_.id, PhaseType.PRESENTATION, "scripted")
        await go_on.wait()
        async for event in events_from_round(round_, pause=0.002):
            if not isinstance(event, PhaseStarted) or event.phase_type != PhaseType.PRESENTATION:
                yield event

    async with started_round(make_app, events) as (pilot, screen):
        await wait_until(lambda: screen.round_id is not None)
        await pilot.pause()
        widgets_before = set(screen.walk_children())
        go_on.set()
        view = screen.view(PhaseType.PRESENTATION)
        await wait_until(lambda: view.status == PhaseStatus.COMPLETE, timeout=60)
        assert set(screen.walk_children()) == widgets_before  # nothing mounted while streaming
        assert view.text == long_text  # streamed in pieces, the same text as the answer of record
        stream = view.stream
        assert len(stream.chunks) >= 2 and "".join(stream.chunks) + stream.tail == long_text
        # each character is rendered a bounded number of times (a chunk once, a paragraph as tail a few
        # times), not once per update of the whole text
        assert stream.rendered_chars < 8 * len(long_text), (stream.rendered_chars, len(long_text))
        await wait_until(lambda: screen.state == "finished", timeout=30)


async def test_what_the_pane_shows_is_the_transcript_rendered_as_one_document(make_app) -> None:
    from rich.console import Console
    from rich.markdown import Markdown as RichMarkdown

    text = ("## Heading\n\nFirst *para*.\n\n- a\n- b\n\n1. one\n\n2. two\n\n```\ncode\n\nmore\n```\n\n"
            "> quoted\n\nLast words.")
    round_ = fixed_round(texts={"response": text})
    app = make_app(run_round=lambda ctx, prepared: events_from_round(round_, pause=0.001))
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        screen = app.screen
        await wait_until(lambda: screen.state == "finished", timeout=60)
        view = screen.view(PhaseType.RESPONSE)
        width = view.content_size.width
        shown = [strip.text.rstrip() for strip in view.stream.lines(width, app.console)]
        console = Console(width=width)
        whole = [
            "".join(seg.text for seg in line).rstrip()
            for line in console.render_lines(RichMarkdown(text, hyperlinks=False),
                                             console.options.update_width(width), pad=False)
        ]
        assert shown == whole


async def test_the_footer_drops_cancel_once_the_round_is_over(make_app) -> None:
    round_ = fixed_round()
    go_on = asyncio.Event()

    async def events():
        yield PhaseStarted(round_.id, PhaseType.PRESENTATION, "scripted")
        await go_on.wait()
        async for event in events_from_round(round_):
            yield event

    async with started_round(make_app, events) as (pilot, screen):
        await wait_until(lambda: screen.round_id is not None)
        assert "cancel_round" in _footer_actions(screen) and "score_card" not in _footer_actions(screen)
        go_on.set()
        await wait_until(lambda: screen.state == "finished")
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
    await wait_until(lambda: screen.view(PhaseType.PRESENTATION).tokens > 0)
    return screen


async def _never_ending(round_id: str):
    """Team A's presentation and Team B's response streaming at once, from models that never stop."""
    yield PhaseStarted(round_id, PhaseType.PRESENTATION, "scripted")
    yield PhaseStarted(round_id, PhaseType.RESPONSE, "scripted")
    while True:
        yield TextDelta(round_id, PhaseType.PRESENTATION, "more words ")
        yield TextDelta(round_id, PhaseType.RESPONSE, "other words ")
        await asyncio.sleep(0.002)


async def test_x_cancels_while_text_streams_whatever_has_focus(make_app) -> None:
    from ebtui.tui.widgets.role_pane import PaneScroll

    round_ = fixed_round()

    app = make_app(run_round=lambda ctx, prepared: _never_ending(round_.id))
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        screen = app.screen
        await wait_until(lambda: screen.view(PhaseType.RESPONSE).text.count("other") > 20)
        screen.query(PaneScroll).last().focus()
        await pilot.press("x")
        await wait_until(lambda: screen.state == "cancelled", timeout=10)
        assert screen.view(PhaseType.PRESENTATION).status == PhaseStatus.CANCELLED


PARAGRAPH = "The keeper weighs **duty** against *mercy*, and the village's safety against one life.\n\n"


async def _paragraphs(round_id: str, phase_type: PhaseType, first: int, go_on: asyncio.Event, more: int):
    """One phase streaming `first` paragraphs, then `more` once `go_on` is set, then still running."""
    yield PhaseStarted(round_id, phase_type, "scripted")
    for _ in range(first):
        yield TextDelta(round_id, phase_type, PARAGRAPH)
    await go_on.wait()
    for _ in range(more):
        yield TextDelta(round_id, phase_type, PARAGRAPH)
    await asyncio.Event().wait()  # still running


async def test_the_pane_follows_the_stream_until_the_reader_scrolls_up(make_app) -> None:
    from ebtui.tui.widgets.role_pane import PaneScroll

    round_ = fixed_round()
    go_on = asyncio.Event()

    app = make_app(run_round=lambda ctx, prepared: _paragraphs(round_.id, PhaseType.PRESENTATION, 40, go_on, 10))
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await _streaming_screen(pilot, app, go_on, round_)
        view = screen.view(PhaseType.PRESENTATION)
        body = screen.query_one("#pane-a").query_one(PaneScroll)
        await wait_until(lambda: view.text.count("keeper") == 40)
        await pilot.pause()
        await wait_until(lambda: body.max_scroll_y > 0 and body.scroll_y == body.max_scroll_y)
        body.focus()
        await pilot.press("home")  # the reader scrolls up to read: the stream must not pull them down
        await wait_until(lambda: body.scroll_y == 0)
        go_on.set()
        await wait_until(lambda: view.text.count("keeper") == 50)
        await pilot.pause()
        await asyncio.sleep(0.3)
        assert body.scroll_y == 0
        await pilot.press("end")  # back at the end: following again
        await wait_until(lambda: body.scroll_y == body.max_scroll_y)
        screen.action_cancel_round()


async def test_a_resize_keeps_a_reader_who_scrolled_up_in_place_and_short_text_at_the_top(make_app) -> None:
    from ebtui.tui.widgets.role_pane import PaneScroll

    round_ = fixed_round()
    more = asyncio.Event()

    app = make_app(run_round=lambda ctx, prepared: _paragraphs(round_.id, PhaseType.RESPONSE, 30, more, 5))
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        screen = app.screen
        body = screen.query_one("#pane-b").query_one(PaneScroll)
        view = screen.view(PhaseType.RESPONSE)
        await wait_until(lambda: view.text.count("keeper") == 30)
        await wait_until(lambda: body.max_scroll_y > 0 and body.scroll_y == body.max_scroll_y)
        body.focus()
        await pilot.press("home", "down")  # the reader scrolls up a little
        await wait_until(lambda: body.scroll_y == 1)
        await pilot.resize_terminal(120, 38)
        more.set()
        await wait_until(lambda: view.text.count("keeper") == 35)
        await asyncio.sleep(0.4)
        await pilot.pause()
        assert body.scroll_y == 1 and not body.following  # neither pulled to the end nor bottom-anchored
        await pilot.press("end")  # back at the end: following again
        await wait_until(lambda: body.following and body.scroll_y == body.max_scroll_y > 0)
        # a window tall enough for the whole text shows it from the top, not bottom-aligned
        await pilot.resize_terminal(400, 200)
        await wait_until(lambda: body.max_scroll_y == 0 and body.scroll_y == 0)
        await pilot.pause()
        assert view.region.y == body.region.y  # the phase starts at the top of the pane
        screen.action_cancel_round()


async def test_the_judge_pane_shows_the_parsed_judgment_and_the_raw_reply_on_r(make_app) -> None:
    round_ = fixed_round()
    async with replayed_round(make_app, round_, size=(160, 50)) as (pilot, screen):
        await pilot.pause()
        view = screen.view(PhaseType.JUDGMENT)
        width = view.content_size.width
        shown = "\n".join(s.text for s in view._all_lines(width))
        judgment = round_.judgment
        a = judgment.effective_scores("a")
        assert "Principle articulation" in shown and "Total" in shown
        assert str(a.total()) in shown
        assert judgment.team_a_justification.split()[0] in shown
        assert round_.phase(PhaseType.JUDGMENT).response not in shown  # not the raw JSON
        await pilot.press("r")
        await pilot.pause()
        raw = "".join(s.text.rstrip() + " " for s in view._all_lines(view.content_size.width))
        assert '"overall_analysis": "A close round."' in " ".join(raw.split())


def test_streamed_lines_equal_the_whole_document_wherever_the_text_arrives_in_pieces() -> None:
    """Deterministic form of the test above: every way of delivering the text in three pieces renders the same
    lines as the whole document (paragraph cuts never split a loose list, a fence or a quote from what leads
    into it)."""
    from rich.console import Console
    from rich.markdown import Markdown as RichMarkdown

    from ebtui.tui.widgets.role_pane import StreamLines

    text = ("## Heading\n\nFirst *para*.\n\n- a\n- b\n\n1. one\n\n2. two\n\n```\ncode\n\nmore\n```\n\n"
            "> quoted\n\nLast words.")
    width = 60
    console = Console(width=width)
    whole = ["".join(seg.text for seg in line).rstrip()
             for line in console.render_lines(RichMarkdown(text, hyperlinks=False),
                                              console.options.update_width(width), pad=False)]
    for a in range(1, len(text)):
        for b in range(a + 1, len(text), 5):
            stream = StreamLines()
            for piece in (text[:a], text[a:b], text[b:]):
                stream.append(piece)
            assert [s.text.rstrip() for s in stream.lines(width, console)] == whole, stream.chunks


def _title_row(screen, pane_id: str) -> tuple[str, bool]:
    """The pane's top border as the screen composes it now: its title text and whether it is reversed."""
    pane = screen.query_one(f"#{pane_id}", RolePane)
    row = screen._compositor.render_strips()[pane.region.y]
    segments = [seg for seg in row if pane.role in seg.text]
    assert len(segments) == 1, segments
    return segments[0].text, bool(segments[0].style and segments[0].style.reverse)


async def test_tab_moves_the_reversed_title_on_the_composed_screen_while_text_streams(make_app) -> None:
    """Focus shows in the panes' titles as painted, not only in their styles: the title row is repainted
    (its cached line replaced) when focus moves, while text streams into the panes."""
    from ebtui.tui.widgets.role_pane import PaneScroll

    round_ = fixed_round()

    app = make_app(run_round=lambda ctx, prepared: _never_ending(round_.id))
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await _streaming_screen(pilot, app, asyncio.Event(), round_)
        screen.query_one("#pane-a").query_one(PaneScroll).focus()
        await pilot.pause()
        await asyncio.sleep(0.2)
        assert _title_row(screen, "pane-a")[1] and not _title_row(screen, "pane-b")[1]
        for focused, blurred in (("pane-b", "pane-a"), ("pane-judge", "pane-b")):
            await pilot.press("tab")
            await wait_until(lambda f=focused: app.focused is screen.query_one(f"#{f}").query_one(PaneScroll))
            await asyncio.sleep(0.1)
            text, reversed_ = _title_row(screen, focused)
            assert reversed_ and screen.query_one(f"#{focused}", RolePane).role in text
            assert not _title_row(screen, blurred)[1]
        screen.action_cancel_round()


async def test_home_and_end_scroll_at_once_not_after_the_next_frame(make_app) -> None:
    """A scroll key moves the pane in its own handler (no deferred scroll waiting for a refresh, no
    animation)."""
    from ebtui.tui.widgets.role_pane import PaneScroll

    round_ = fixed_round()

    app = make_app(run_round=lambda ctx, prepared: _paragraphs(round_.id, PhaseType.PRESENTATION, 40, asyncio.Event(), 0))
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await _streaming_screen(pilot, app, asyncio.Event(), round_)
        body = screen.query_one("#pane-a").query_one(PaneScroll)
        await wait_until(lambda: body.max_scroll_y > 0 and body.scroll_y == body.max_scroll_y)
        body.focus()
        body.action_scroll_home()
        assert body.scroll_y == 0
        body.action_page_down()
        assert body.scroll_y == body.scrollable_content_region.height
        body.action_scroll_down()  # one line, without animation (Textual's default animates it)
        assert body.scroll_y == body.scrollable_content_region.height + 1
        body.action_scroll_up()
        body.action_scroll_up()
        assert body.scroll_y == body.scrollable_content_region.height - 1
        body.action_scroll_end()
        assert body.scroll_y == body.max_scroll_y
        await pilot.press("home", "down")  # the same through the keys
        assert body.scroll_y == 1
        await pilot.press("up")
        assert body.scroll_y == 0
        screen.action_cancel_round()
