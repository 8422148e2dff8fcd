"""Files in the runtime: stored with their message, carried by every request whose rows
refer to them (across turns and a reopen), refused by the real API's rules when they break
them, named by the offline model, and a line in compaction's plain-text record."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from runtime.agents import AgentSpec
from runtime.compaction import record_of
from runtime.engine import Runtime
from runtime.events import EventType
from runtime.providers.base import IMAGE_CHARS, ProviderRequest, request_chars
from runtime.providers.offline import OfflineProvider
from runtime.transcript import AttachmentBlock, AttachmentForm, TextBlock, TranscriptMessage
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.files_samples import jpeg, pdf, png
from tests.runtime.helpers import blocking_tool, open_runtime, operator, wait_for


def photo(data: bytes, name: str = "photo.jpg") -> AttachmentBlock:
    return AttachmentBlock(
        id=f"att_{name}",
        name=name,
        media_type="image/jpeg",
        form=AttachmentForm.IMAGE,
        size=len(data),
    )


async def test_every_later_request_carries_the_file_even_after_a_reopen(
    db_path: Path, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("A photo."), text("Still the photo."), text("Yes.")]
    picture = jpeg(640, 480)
    rt = await open_runtime(db_path, anthropic_api)
    sid = await rt.create_session("assistant")
    att = photo(picture)
    await rt.submit(sid, operator("look", attachments=(att,)), files={att.id: picture})
    await asyncio.wait_for(rt.wait_idle(), 10)
    await rt.submit(sid, operator("and now?"))
    await asyncio.wait_for(rt.wait_idle(), 10)
    await rt.close()
    rt = await open_runtime(db_path, anthropic_api)
    try:
        await rt.submit(sid, operator("and after a restart?"))
        await asyncio.wait_for(rt.wait_idle(), 10)
    finally:
        await rt.close()
    assert len(anthropic_api.requests) == 3 and anthropic_api.refused == []
    for request in anthropic_api.requests:
        first = request["messages"][0]["content"]
        assert first[1]["type"] == "image"
        assert base64.b64decode(first[1]["source"]["data"]) == picture
        assert first[2]["text"] == "look"


async def test_a_message_without_the_bytes_of_its_file_is_refused(
    db_path: Path, anthropic_api: FakeAnthropic, cleanup: list[object]
) -> None:
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    with pytest.raises(ValueError, match="no bytes given"):
        await rt.submit(sid, operator("look", attachments=(photo(b"x"),)))
    assert await rt.store.messages() == []


async def test_an_image_that_is_not_what_it_says_is_refused_by_the_api(
    db_path: Path, anthropic_api: FakeAnthropic, cleanup: list[object]
) -> None:
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    lie = photo(pdf())  # the runtime passes on what the bridge checked; the API checks again
    await rt.submit(sid, operator("look", attachments=(lie,)), files={lie.id: pdf()})
    finished = await wait_for(rt, EventType.TURN_FINISHED)
    assert finished.data.outcome == "failed"
    [(_, why)] = anthropic_api.refused
    assert "specified using the image/jpeg media type" in why


async def test_the_offline_model_names_the_files_it_received(
    db_path: Path, cleanup: list[object]
) -> None:
    rt = await Runtime.open(db_path, provider=OfflineProvider(), agents=[AgentSpec("assistant")])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    notes = AttachmentBlock(
        id="att_notes", name="notes.txt", media_type="text/plain", form=AttachmentForm.TEXT, size=12
    )
    await rt.submit(sid, operator("read this", attachments=(notes,)), files={notes.id: b"x" * 12})
    finished = await wait_for(rt, EventType.TURN_FINISHED)
    assert finished.data.final_text == (
        "I received 1 file(s): notes.txt (text/plain, 12 bytes). You said: read this"
    )
    transcript = await rt.store.transcript(sid)
    assert transcript.files == {"att_notes": b"x" * 12}
    assert "[operator alice via test sent a file] notes.txt (text/plain, 12 bytes)" in record_of(
        transcript, 1, {m.id: m for m in await rt.store.messages()}
    )


async def test_a_file_sent_while_a_tool_runs_reaches_the_model_at_the_safe_point(
    db_path: Path, anthropic_api: FakeAnthropic, tmp_path: Path, cleanup: list[object]
) -> None:
    gate, marker = tmp_path / "gate", tmp_path / "marker"
    anthropic_api.script = [tools(("wait", {})), text("Seen it.")]
    rt = await open_runtime(
        db_path, anthropic_api, command_tools=[blocking_tool("wait", gate, marker)]
    )
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("start"))
    await wait_for(rt, EventType.TOOL_STARTED)
    picture = png(32, 32)
    att = photo(picture, "graph.png").model_copy(update={"media_type": "image/png"})
    await rt.submit(sid, operator("this graph too", attachments=(att,)), files={att.id: picture})
    gate.touch()
    await wait_for(rt, EventType.TURN_FINISHED)
    last = anthropic_api.requests[1]["messages"][2]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text", "text", "image"]
    assert "this graph too" in last[1]["text"] and "graph.png" in last[2]["text"]
    assert base64.b64decode(last[3]["source"]["data"]) == picture
    assert anthropic_api.refused == []


def test_a_file_counts_in_the_context_estimate() -> None:
    att = photo(b"\xff\xd8\xff")
    plain = ProviderRequest(
        "m", "", [TranscriptMessage(role="user", blocks=[TextBlock(text="hi")])], [], 10
    )
    with_file = ProviderRequest(
        "m", "", [TranscriptMessage(role="user", blocks=[att, TextBlock(text="hi")])], [], 10
    )
    assert request_chars(with_file) - request_chars(plain) >= IMAGE_CHARS
