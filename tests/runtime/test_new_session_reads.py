"""The first turn of a session this process just created reads no transcript (issue 45: CPU
per turn; on Slack every new thread is a new session): nothing of it can be stored yet where
this process is the database's only writer. Its next turn, and a turn after a restart, read
what is stored; replicas (PostgreSQL) always read, since another may have run it."""

from __future__ import annotations

from pathlib import Path

from runtime import Runtime
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.runtime.helpers import open_runtime, operator
from tests.runtime.test_memory_reads import reads_of

TRANSCRIPT_READS = ("FROM compactions", "FROM transcript")


def transcript_reads(seen: list[str]) -> list[str]:
    return [sql for sql in seen if any(t in sql for t in TRANSCRIPT_READS)]


async def turn(rt: Runtime, session_id: str, words: str) -> None:
    await rt.submit(session_id, operator(words))
    await rt.wait_idle()


def said(body: dict[str, object]) -> list[str]:
    """Each message's text blocks, joined, in order."""
    messages = body["messages"]
    assert isinstance(messages, list)
    return [
        " ".join(b["text"] for b in m["content"] if b.get("type") == "text")
        if isinstance(m["content"], list)
        else m["content"]
        for m in messages
    ]


async def test_a_new_sessions_first_turn_reads_no_transcript_and_its_next_turn_does(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [text("Hello."), text("Still here."), text("Back again.")]
    rt = await open_runtime(db_path, anthropic_api)
    try:
        seen = reads_of(rt)
        sid = await rt.create_session("assistant")
        await turn(rt, sid, "hi")
        replicas = rt.store.db.shared
        assert bool(transcript_reads(seen)) is replicas, seen
        seen.clear()
        await turn(rt, sid, "are you there?")
        assert transcript_reads(seen), "its second turn reads what the first one stored"
        assert said(anthropic_api.requests[1]) == ["hi", "Hello.", "are you there?"]
    finally:
        await rt.close()

    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    seen = reads_of(rt)
    await turn(rt, sid, "and now?")
    assert transcript_reads(seen), "a session this process did not create is read"
    assert said(anthropic_api.requests[2]) == [
        "hi",
        "Hello.",
        "are you there?",
        "Still here.",
        "and now?",
    ]
