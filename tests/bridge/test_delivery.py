"""The outbox: order, splitting, retries only when a send certainly did not land, restarts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from adapters.console.profile import CONSOLE
from adapters.slack.platform import SLACK
from adapters.telegram.platform import TELEGRAM
from bridge.outbox import MAX_ATTEMPTS, SPLIT_ON_LOOP_CHARS, Outbox
from bridge.service import Bridge
from bridge.split import split
from bridge.store.store import BridgeStore
from bridge.transport import DeliveryError
from bridge.types import DeliveryKind, DeliveryStatus
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, config_for, dm, open_bridge
from tests.fakes.anthropic_api import FakeAnthropic, text

T = TypeVar("T")


async def deliveries(bridge: Bridge) -> list[dict[str, object]]:
    return [
        {
            "id": i.id,
            "kind": i.kind,
            "status": i.status,
            "attempts": i.attempts,
            "chunks_sent": i.chunks_sent,
            "last_error": i.last_error,
        }
        for i in await bridge.store.intents()
    ]


async def deliver_one(
    db_path: Path, anthropic_api: FakeAnthropic, transport: RecordingTransport, prompt: str
) -> dict[str, object]:
    """An operator's DM through a bridge on `transport`, until every delivery has settled:
    the one delivery row it made."""
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    try:
        await bridge.receive(dm(prompt))
        await bridge.settle()
        [row] = await deliveries(bridge)
    finally:
        await close_bridge(bridge)
    return row


async def test_a_long_answer_arrives_whole_and_in_order(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    paragraphs = [f"Paragraph {i}: " + "word " * 60 for i in range(30)]
    answer = (
        "\n\n".join(paragraphs[:15])
        + "\n\n```\n"
        + "\n".join(f"code line {i}" for i in range(200))
        + "\n```\n\n"
        + "\n\n".join(paragraphs[15:])
    )
    assert len(answer) > 10_000
    anthropic_api.script = [text(answer)]
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    try:
        await bridge.receive(dm("write a lot"))
        await bridge.settle()
    finally:
        await close_bridge(bridge)
    assert len(transport.sent) >= 3
    assert [s.chunk for s in transport.sent] == list(range(len(transport.sent)))
    assert all(len(s.text) <= 4096 for s in transport.sent)
    joined = "\n".join(s.text for s in transport.sent)
    for i in range(30):
        assert f"Paragraph {i}:" in joined
    assert (
        joined.index("Paragraph 14:") < joined.index("code line 0") < joined.index("Paragraph 15:")
    )
    for sent in transport.sent:
        assert sent.text.count("<pre>") == sent.text.count("</pre>"), "no code block is cut open"


async def test_retry_after_is_honoured_and_nothing_is_lost(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    transport = RecordingTransport(
        fail=lambda attempt: (
            DeliveryError("429 Too Many Requests", retryable=True, retry_after=0.01)
            if attempt <= 2
            else None
        )
    )
    row = await deliver_one(db_path, anthropic_api, transport, "hi")
    assert [s.text for s in transport.sent] == ["ok"]
    assert row["status"] == "accepted_by_transport" and row["attempts"] == 2


async def test_a_send_that_cannot_work_is_not_retried(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    error = DeliveryError("403 Forbidden: bot was blocked by the user", retryable=False)
    transport = RecordingTransport(fail=lambda attempt: error)
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    try:
        await bridge.receive(dm("hi"))
        await bridge.settle()
        [row] = await deliveries(bridge)
        [runs] = await bridge.runtime.store.runs()
    finally:
        await close_bridge(bridge)
    assert transport.attempts == 1
    assert row["status"] == "failed"
    assert row["last_error"] == "403 Forbidden: bot was blocked by the user; 0 of 1 parts delivered"
    assert runs.status == "completed", "a failed delivery never fails the turn"


async def test_an_unknown_outcome_the_platform_cannot_look_up_is_sent_again(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    """A 5xx or a read timeout on a platform that cannot be asked (Telegram): the chunk goes
    again; a repeated part beats a lost one."""
    timeout = DeliveryError("timed out", retryable=True, landed="unknown", retry_after=0)
    transport = RecordingTransport(fail=lambda attempt: timeout if attempt == 1 else None)
    row = await deliver_one(db_path, anthropic_api, transport, "hi")
    assert transport.lookups == [(row["id"], 0)], "asked first; it could not tell"
    assert [s.text for s in transport.sent] == ["ok"]
    assert row["status"] == "accepted_by_transport" and row["attempts"] == 1


async def test_a_failure_mid_reply_resends_that_part_and_the_rest_follows(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    """The Bot API answers 502 on the second message of a long answer: every word arrives,
    in order."""
    anthropic_api.script = [text("\n\n".join(f"part {i} " + "word " * 700 for i in range(3)))]
    bad_gateway = DeliveryError("502 Bad Gateway", retryable=True, landed="unknown")
    transport = RecordingTransport(fail=lambda attempt: bad_gateway if attempt == 2 else None)
    row = await deliver_one(db_path, anthropic_api, transport, "write a lot")
    assert [s.chunk for s in transport.sent] == [0, 1, 2]
    joined = " ".join(s.text for s in transport.sent)
    assert joined.split() == " ".join(f"part {i} " + "word " * 700 for i in range(3)).split()
    assert row["status"] == "accepted_by_transport" and row["attempts"] == 1


async def test_a_reply_that_keeps_failing_says_how_much_of_it_arrived(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    anthropic_api.script = [text("\n\n".join(f"part {i} " + "word " * 700 for i in range(3)))]
    timeout = DeliveryError("timed out", retryable=True, landed="unknown", retry_after=0)
    transport = RecordingTransport(fail=lambda attempt: timeout if attempt >= 2 else None)
    row = await deliver_one(db_path, anthropic_api, transport, "write a lot")
    assert transport.attempts == 1 + MAX_ATTEMPTS
    assert row["status"] == "failed" and row["chunks_sent"] == 1
    assert row["attempts"] == MAX_ATTEMPTS
    assert row["last_error"] == "timed out (it may have arrived); 1 of 3 parts delivered"


async def test_killed_after_the_intent_is_written_delivers_exactly_once_after_restart(
    anthropic_api: FakeAnthropic, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_for(db_path, anthropic_api)
    monkeypatch.setattr(Outbox, "wake", lambda self, key: None)  # dies before any send
    first = RecordingTransport()
    bridge = await open_bridge(config, first)
    await bridge.receive(dm("hi"))
    await bridge.runtime.wait_idle()
    await bridge.followers.caught_up(bridge.runtime.store.last_seq)
    assert [r["status"] for r in await deliveries(bridge)] == ["pending"]
    await close_bridge(bridge)
    monkeypatch.undo()

    sent_per_restart = []
    for _ in range(2):  # restart, then restart once more
        transport = RecordingTransport()
        bridge = await open_bridge(config, transport)
        await bridge.settle()
        await close_bridge(bridge)
        sent_per_restart.append([s.text for s in transport.sent])
    assert first.sent == []
    assert sent_per_restart == [["ok"], []], "delivered once, by the first restart"


@pytest.mark.parametrize(
    ("landed", "sends"),
    [(True, []), (False, ["ok"]), (None, ["ok"])],
    ids=["found-not-resent", "not-found-sent", "cannot-tell-sent-at-least-once"],
)
async def test_killed_mid_send_the_platform_is_asked_before_a_resend(
    anthropic_api: FakeAnthropic,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    landed: bool | None,
    sends: list[str],
) -> None:
    config = config_for(db_path, anthropic_api)
    monkeypatch.setattr(Outbox, "wake", lambda self, key: None)
    bridge = await open_bridge(config, RecordingTransport())
    await bridge.receive(dm("hi"))
    await bridge.runtime.wait_idle()
    await bridge.followers.caught_up(bridge.runtime.store.last_seq)
    intents = await bridge.store.intents()
    async with bridge.store.write() as tx:  # the process died during the send
        for intent in intents:
            tx.update_intent(intent.id, DeliveryStatus.SENDING)
    await close_bridge(bridge)
    monkeypatch.undo()

    transport = RecordingTransport(landed=landed)
    bridge = await open_bridge(config, transport)
    await bridge.settle()
    [row] = await deliveries(bridge)
    await close_bridge(bridge)
    assert transport.lookups == [(row["id"], 0)]
    assert [s.text for s in transport.sent] == sends
    assert row["status"] == "accepted_by_transport"


async def test_an_unknown_outcome_found_landed_is_not_sent_again(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    timeout = DeliveryError("timed out", retryable=True, landed="unknown", retry_after=0)
    transport = RecordingTransport(fail=lambda attempt: timeout if attempt == 1 else None)
    transport.landed = True
    row = await deliver_one(db_path, anthropic_api, transport, "hi")
    assert transport.attempts == 1 and transport.sent == []
    assert row["status"] == "accepted_by_transport" and row["attempts"] == 1


def test_split_never_breaks_code_and_respects_rendered_size() -> None:
    code = "```python\n" + "\n".join(f"x_{i} = '<{i}>' & {i}" for i in range(400)) + "\n```"
    measure = lambda s: len(TELEGRAM.render(s))  # noqa: E731
    chunks = split(code, 1000, measure)
    assert len(chunks) > 1
    for chunk in chunks:
        assert measure(chunk) <= 1000
        assert chunk.startswith("```python\n") and chunk.endswith("\n```")
    body = [line for c in chunks for line in c.splitlines()[1:-1]]
    assert body == code.splitlines()[1:-1]


def test_rendering() -> None:
    md = "**Bold** & <tag> `a<b` [site](https://example.org/x?a=1&b=2)"
    assert TELEGRAM.render(md) == (
        "<b>Bold</b> &amp; &lt;tag&gt; <code>a&lt;b</code> "
        '<a href="https://example.org/x?a=1&amp;b=2">site</a>'
    )
    assert SLACK.render(md) == (
        "*Bold* &amp; &lt;tag&gt; `a&lt;b` <https://example.org/x?a=1&b=2|site>"
    )
    assert CONSOLE.render(md) == "Bold & <tag> a<b site (https://example.org/x?a=1&b=2)"


async def test_a_reply_reads_its_conversations_queue_once(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    """Issue 45 (CPU per turn): one process enqueues every intent and is woken by each, so
    once the reply it read was the only one waiting, its worker stops without reading again."""
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    try:
        reads: list[str] = []
        read = bridge.store.next_intent

        async def counted(conversation_key: str) -> object:
            reads.append(conversation_key)
            return await read(conversation_key)

        bridge.store.next_intent = counted  # type: ignore[method-assign]
        await bridge.receive(dm("hi"))
        await bridge.settle()
        assert [s.text for s in transport.sent] == ["ok"]
        assert len(reads) == 1, reads
    finally:
        await close_bridge(bridge)


@pytest.mark.parametrize("length", [4, SPLIT_ON_LOOP_CHARS, SPLIT_ON_LOOP_CHARS + 1, 8_000])
async def test_a_short_reply_is_split_on_the_event_loop_and_a_long_one_off_it(
    anthropic_api: FakeAnthropic,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    length: int,
) -> None:
    """Issue 45 (CPU per turn): handing a short reply's split to a thread and back cost more
    than the split; a long one still does not hold the event loop. Either way, the same
    chunks."""
    answer = ("word " * length)[:length]
    anthropic_api.script = [text(answer)]
    off_loop: list[object] = []
    to_thread = asyncio.to_thread

    async def counted(fn: Callable[..., T], *args: object) -> T:
        off_loop.append(fn)
        return await to_thread(fn, *args)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    try:
        await bridge.receive(dm("say it"))
        await bridge.settle()
    finally:
        await close_bridge(bridge)
    splits = [fn for fn in off_loop if fn is split]  # the model's SDK hands work off too
    assert splits == ([split] if length > SPLIT_ON_LOOP_CHARS else [])
    profile = transport.profile
    limit = profile.limits.max_chars_for(DeliveryKind.TURN_RESULT, buttons=False)
    chunks = split(answer, limit, lambda s: len(profile.render(s)))
    assert [s.text for s in transport.sent] == [profile.render(c) for c in chunks]
    assert len(chunks) == (1 if length <= 4096 else 2)


async def test_replies_waiting_together_are_each_sent_in_order(
    anthropic_api: FakeAnthropic, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three replies a crash left waiting in one conversation: the worker its restart starts
    sends them all, oldest first, though each read told of the next one only."""
    config = config_for(db_path, anthropic_api)
    anthropic_api.script = [text("one"), text("two"), text("three")]
    monkeypatch.setattr(Outbox, "wake", lambda self, key: None)  # dies before any send
    bridge = await open_bridge(config, RecordingTransport())
    for n, words in enumerate(("a", "b", "c"), start=1):
        await bridge.receive(dm(words, update_id=n))
        await bridge.runtime.wait_idle()
    await bridge.followers.caught_up(bridge.runtime.store.last_seq)
    assert [r["status"] for r in await deliveries(bridge)] == ["pending"] * 3
    await close_bridge(bridge)
    monkeypatch.undo()

    reads: list[str] = []
    read = BridgeStore.next_intent

    async def counted(store: BridgeStore, conversation_key: str) -> object:
        reads.append(conversation_key)
        return await read(store, conversation_key)

    monkeypatch.setattr(BridgeStore, "next_intent", counted)
    transport = RecordingTransport()
    bridge = await open_bridge(config, transport)
    try:
        await bridge.settle()
        assert [s.text for s in transport.sent] == ["one", "two", "three"]
        assert len(reads) == 3, "a read each, none after the last"
    finally:
        await close_bridge(bridge)
