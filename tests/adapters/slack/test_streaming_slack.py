"""Streamed answers on Slack (issue 12): slack-bolt and the real App against the fake Web
API, which enforces Slack's rate limits, takes the streaming methods for AI apps only from an
app with the assistant features, and keeps what a user would see. The model is held half-way
through its answer, so what the thread shows mid-stream can be looked at."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from adapters.server.app import App
from bridge import texts
from tests.adapters.crash import crash
from tests.adapters.slack_harness import OPS, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, Reply
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until

pytestmark = pytest.mark.real_pacing  # streams and progress run at the platforms' own pace

FIRST, SECOND = "The first half of the **answer**, ", "and the second half."
ANSWER = "The first half of the *answer*, and the second half."  # as mrkdwn
DM = "DALICE"


def halted() -> tuple[Reply, asyncio.Event]:
    """An answer whose stream stops after its first block until the event is set."""
    hold = asyncio.Event()
    blocks = [{"type": "text", "text": FIRST}, {"type": "text", "text": SECOND}]
    return Reply(blocks=blocks, hold=hold), hold


def assert_clean(slack_api: FakeSlack) -> None:
    assert slack_api.refused == [] and slack_api.self_caused == []


async def in_a_dm_thread(slack: SlackSide, text: str) -> str:
    """A message in a thread of the app's DM (an assistant thread); the thread's ts."""
    top = await slack.say("a new thread", channel=DM)
    await slack.say(text, channel=DM, thread_ts=top)
    return top


async def test_an_answer_streams_with_slacks_streaming_methods_then_lands_once(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack_api.teams["xoxb-test-t1"].assistant = True
    reply, hold = halted()
    anthropic_api.script = [Reply(blocks=[{"type": "text", "text": "ok"}]), reply]
    await in_a_dm_thread(slack, "explain")
    await until(lambda: bool(slack_api.method_calls("chat.startStream")))
    [started] = slack_api.method_calls("chat.startStream")
    assert started["markdown_text"].startswith("The first half"), "markdown, as the model wrote"
    assert not any(SECOND in t for t in slack_api.shown(DM)), "the answer is not posted yet"
    hold.set()
    await until(lambda: any(p["text"] == ANSWER for p in slack_api.posts(DM)))
    await app.bridge.settle()
    await until(lambda: slack_api.shown(DM).count(ANSWER) == 1 and len(slack_api.shown(DM)) == 2)
    assert sorted(slack_api.shown(DM)) == sorted(["ok", ANSWER]), "stream and progress gone"
    assert_clean(slack_api)


async def test_where_slack_refuses_to_stream_the_progress_message_shows_the_answer(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack_api.teams["xoxb-test-t1"].streaming = False  # no assistant features: refused
    reply, hold = halted()
    anthropic_api.script = [Reply(blocks=[{"type": "text", "text": "ok"}]), reply]
    await in_a_dm_thread(slack, "explain")
    await until(lambda: any("The first half" in t for t in slack_api.shown(DM)))
    assert slack_api.method_calls("chat.startStream"), "streaming was tried"
    [live] = [t for t in slack_api.shown(DM) if "The first half" in t]
    assert "\u23f3" in live, "the answer so far and the status, in one message"
    hold.set()
    await until(lambda: any(p["text"] == ANSWER for p in slack_api.posts(DM)))
    await app.bridge.settle()
    await until(lambda: len(slack_api.shown(DM)) == 2)
    assert sorted(slack_api.shown(DM)) == sorted(["ok", ANSWER])
    assert len(slack_api.method_calls("chat.startStream")) == 1, "not tried again here"
    assert_clean(slack_api)


async def test_in_a_channel_the_answer_streams_into_the_progress_message(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    reply, hold = halted()
    anthropic_api.script = [reply]
    await slack.say("explain", channel=OPS)
    await until(lambda: any("The first half" in t for t in slack_api.shown(OPS)))
    # The progress message (its Stop button in blocks) shows the answer so far: posted with
    # it when the text came first, else updated to it (chat.update), as the pacer allowed.
    [live] = [m for m in slack_api.messages[OPS] if "The first half" in m["text"]]
    assert "blocks" in live and "\u23f3" in live["text"], "the answer so far, and the status"
    hold.set()
    await until(lambda: slack_api.shown(OPS) == [ANSWER])
    await app.bridge.settle()
    assert slack_api.shown(OPS) == [ANSWER]
    assert slack_api.method_calls("chat.startStream") == []
    assert_clean(slack_api)


async def test_stop_mid_stream_ends_the_stream_saying_it_was_stopped(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack_api.teams["xoxb-test-t1"].assistant = True
    reply, hold = halted()
    anthropic_api.script = [Reply(blocks=[{"type": "text", "text": "ok"}]), reply]
    top = await in_a_dm_thread(slack, "explain")
    await until(lambda: bool(slack_api.method_calls("chat.startStream")))
    await slack.say("/stop", channel=DM, thread_ts=top)
    await until(lambda: bool(slack_api.method_calls("chat.stopStream")))
    hold.set()
    await app.bridge.settle()
    [partial] = [t for t in slack_api.shown(DM) if t.startswith("The first half")]
    assert partial.endswith(f"_{texts.STREAM_STOPPED}_"), "the words that came, marked stopped"
    assert not any(SECOND in t for t in slack_api.shown(DM)), "no answer after the stop"
    await until(lambda: not [m for m in slack_api.messages[DM] if "blocks" in m])
    assert_clean(slack_api)


async def test_a_crash_mid_stream_ends_with_the_answer_once_and_no_stream_left(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    slack_api.teams["xoxb-test-t1"].assistant = True
    reply, hold = halted()
    anthropic_api.script = [reply]
    app = await start_app(db_path, anthropic_api, slack_api)
    parent = slack_api.add_user_message(DM, "a new thread", "UALICE")
    await SlackSide(app, slack_api).say("explain", channel=DM, thread_ts=parent)
    # the stream shows its first words (on a loaded machine they come after startStream)
    await until(lambda: any(t.startswith("The first half") for t in slack_api.shown(DM)), 30)
    # ...and the bridge has recorded it as shown (as startStream returned): the crash comes
    # after that write (one between startStream's answer and the write would leave it).
    [stream] = [m["ts"] for m in slack_api.messages[DM] if m["text"].startswith("The first")]
    async with asyncio.timeout(30):
        while True:
            if stream in {ts for _, ts in await app.bridge.store.live_messages()}:
                break
            await asyncio.sleep(0.02)
    await crash(app)
    assert any(t.startswith("The first half") for t in slack_api.shown(DM)), "a stream left"
    hold.set()
    anthropic_api.script = [Reply(blocks=[{"type": "text", "text": FIRST + SECOND}])]
    await asyncio.sleep(1.0)  # a process starts again no sooner than the channel's second
    app = await start_app(db_path, anthropic_api, slack_api)
    try:
        shown = [texts.RESUMED_ANSWER.format(answer=ANSWER)]  # told it went on, with it
        await until(lambda: slack_api.shown(DM) == shown, wait_s=30)  # a loaded machine
        await app.bridge.settle()
        assert slack_api.shown(DM) == shown, "the answer once; stream and progress gone"
        assert_clean(slack_api)
    finally:
        await app.stop()


async def test_a_crash_inside_an_update_leaves_no_stream_it_had_started(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    """A stream is recorded as chat.startStream returns, not when the whole update is done: a
    crash while the same update's next call (the progress message's edit) is under way leaves
    no stream in the thread once the process is back."""
    slack_api.teams["xoxb-test-t1"].assistant = True
    reply, hold = halted()
    # The model says nothing until the first update is under way. Else, on a loaded machine,
    # its first words can be in before that update looks (the bridge's lookup of the turn's
    # route is slow; the words queue behind it), and it starts the stream before it posts
    # the progress message: no call of that update would be left to hold after startStream.
    reply.begin = asyncio.Event()
    anthropic_api.script = [reply]
    patient = {"request_timeout_s": 30}  # Slack's held calls are waited for, not given up
    app = await start_app(db_path, anthropic_api, slack_api, slack_extra=patient)
    presenter = app.bridge.presenter
    # Slack holds the first update's status line until the first words are in and the turn's
    # time has moved on: the next update starts the stream, then edits the progress message
    # (its time changed), which Slack holds.
    status = slack_api.gate("assistant.threads.setStatus")
    parent = slack_api.add_user_message(DM, "a new thread", "UALICE")
    await SlackSide(app, slack_api).say("explain", channel=DM, thread_ts=parent)

    def words_in_and_time_moved() -> bool:
        now = presenter._clock.monotonic()
        return any(v.answer and now - v.started > 1.5 for v in presenter._live.values())

    await until(lambda: bool(slack_api.method_calls("assistant.threads.setStatus")), 30)
    reply.begin.set()  # the first update looked before any words: it shows none
    await until(words_in_and_time_moved, 30)
    editing = slack_api.gate("chat.update")
    del slack_api.gates["assistant.threads.setStatus"]
    status.set()
    await until(lambda: bool(slack_api.method_calls("chat.update")), 30)
    called = [m for m, _, _ in slack_api.calls]
    assert called[-3:] == [
        "chat.postMessage",  # the first update's progress message
        "chat.startStream",  # the next update's stream...
        "chat.update",  # ...and its edit, held
    ], f"Slack was called: {called}"
    await crash(app)
    assert any(t.startswith("The first half") for t in slack_api.shown(DM)), "a stream left"
    del slack_api.gates["chat.update"]
    editing.set()  # the edit Slack held lands on the progress message
    hold.set()
    anthropic_api.script = [Reply(blocks=[{"type": "text", "text": FIRST + SECOND}])]
    await asyncio.sleep(1.0)  # a process starts again no sooner than the channel's second
    app = await start_app(db_path, anthropic_api, slack_api)
    try:
        shown = [texts.RESUMED_ANSWER.format(answer=ANSWER)]
        await until(lambda: slack_api.shown(DM) == shown, wait_s=30)
        await app.bridge.settle()
        assert slack_api.shown(DM) == shown, "the answer once; stream and progress gone"
        assert_clean(slack_api)
    finally:
        await app.stop()
