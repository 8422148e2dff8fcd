"""The Anthropic provider through the real SDK: streaming, retries, stop reasons, lowering."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runtime.engine import Runtime
from runtime.errors import TranscriptInvariantError
from runtime.events import EventType
from runtime.providers.anthropic import lower_request
from runtime.providers.base import ProviderRequest
from runtime.records import RunStatus
from runtime.steps import REFUSAL_TEXT, TRUNCATED_NOTE
from runtime.transcript import TextBlock, ToolUseBlock, TranscriptMessage
from tests.fakes.anthropic_api import FakeAnthropic, Reply, error, text, tools
from tests.runtime.helpers import MODEL, all_events, open_runtime, operator


async def _one_turn(
    fake: FakeAnthropic, db_path: Path, cleanup: list[object], prompt: str = "hi"
) -> tuple[Runtime, str]:
    rt = await open_runtime(db_path, fake)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator(prompt))
    await rt.wait_idle()
    return rt, sid


async def test_text_streams_as_deltas_and_lands_as_final_text(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [text("The quick brown fox jumps over the lazy dog.")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    deltas: list[str] = []

    async def watch() -> None:
        async for event in rt.events():
            if event.type is EventType.ASSISTANT_TEXT_DELTA:
                deltas.append(event.data.delta)
            if event.type is EventType.TURN_FINISHED:
                return

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0)
    await rt.submit(sid, operator("tell me"))
    await asyncio.wait_for(watcher, 10)
    assert len(deltas) > 3
    assert "".join(deltas) == "The quick brown fox jumps over the lazy dog."
    body = anthropic_api.requests[0]
    assert body["stream"] is True and body["model"] == MODEL
    assert body["system"] == [
        {"type": "text", "text": "You are a test agent.", "cache_control": {"type": "ephemeral"}}
    ]
    assert {t["name"] for t in body["tools"]} == {"notify_operator", "sleep", "spawn_agent"}


@pytest.mark.parametrize(
    "status,kind",
    [(429, "rate_limit_error"), (529, "overloaded_error"), (500, "api_error"), (503, "api_error")],
)
async def test_retryable_errors_are_retried_with_retry_after(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object], status: int, kind: str
) -> None:
    anthropic_api.script = [
        error(status, kind, "try later", **{"retry-after-ms": "10"}),
        text("made it"),
    ]
    rt, sid = await _one_turn(anthropic_api, db_path, cleanup)
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.COMPLETED and run.final_text == "made it"
    await asyncio.sleep(0.01)
    [retry] = await all_events(rt, EventType.PROVIDER_RETRY)
    assert retry.data.attempt == 1 and retry.data.delay_s == pytest.approx(0.01)
    assert str(status) in retry.data.error


async def test_overloaded_error_mid_stream_is_retried(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        Reply(blocks=[{"type": "text", "text": "partial"}], stream_error="overloaded_error"),
        text("whole answer"),
    ]
    rt, sid = await _one_turn(anthropic_api, db_path, cleanup)
    [run] = await rt.store.runs(session_id=sid)
    assert run.final_text == "whole answer"


async def test_a_stream_cut_before_its_end_is_retried_not_taken_as_the_answer(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        Reply(blocks=[{"type": "text", "text": "half an"}], stream_cut=True),
        text("whole answer"),
    ]
    rt, sid = await _one_turn(anthropic_api, db_path, cleanup)
    [run] = await rt.store.runs(session_id=sid)
    assert run.final_text == "whole answer"
    [retry] = await all_events(rt, EventType.PROVIDER_RETRY)
    assert "message_stop" in retry.data.error


async def test_bad_request_fails_the_turn_without_retry(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [error(400, "invalid_request_error", "model: unknown model")]
    rt, sid = await _one_turn(anthropic_api, db_path, cleanup)
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.FAILED
    assert "400" in (run.error or "") and "unknown model" in (run.error or "")
    assert len(anthropic_api.requests) == 1


async def test_persistent_overload_gives_up_with_a_clear_error(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.responder = lambda body: error(
        529, "overloaded_error", "Overloaded", **{"retry-after-ms": "1"}
    )
    rt, sid = await _one_turn(anthropic_api, db_path, cleanup)
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.FAILED and "overloaded" in (run.error or "").lower()
    assert len(anthropic_api.requests) == 5


async def test_max_tokens_keeps_text_and_drops_cut_tool_calls(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        tools(("sleep", {"seconds": 1}), say="I was about to", stop_reason="max_tokens"),
        text("next"),
    ]
    rt, sid = await _one_turn(anthropic_api, db_path, cleanup)
    [run] = await rt.store.runs(session_id=sid)
    assert run.final_text == f"I was about to\n\n{TRUNCATED_NOTE}"
    assert await rt.store.tool_calls() == []
    await rt.submit(sid, operator("continue"))
    await rt.wait_idle()
    assert anthropic_api.refused == []


async def test_refusal_and_pause_turn(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        Reply(blocks=[], stop_reason="refusal"),
        text("working on it", stop_reason="pause_turn"),
        text(" and done"),
    ]
    rt, sid = await _one_turn(anthropic_api, db_path, cleanup)
    await rt.submit(sid, operator("second"))
    await rt.wait_idle()
    runs = await rt.store.runs(session_id=sid)
    assert [r.final_text for r in runs] == [REFUSAL_TEXT, " and done"]
    assert len(anthropic_api.requests) == 3, "pause_turn asks the model to go on"
    assert anthropic_api.refused == []


async def test_duplicate_tool_ids_from_the_model_fail_the_turn_cleanly(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    dup = Reply(
        blocks=[{"type": "tool_use", "id": "toolu_x", "name": "sleep", "input": {"seconds": 0}}] * 2
    )
    anthropic_api.script = [dup, text("fine")]
    rt, sid = await _one_turn(anthropic_api, db_path, cleanup)
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.FAILED and "duplicate tool_use ids" in (run.error or "")
    await rt.submit(sid, operator("again"))
    await rt.wait_idle()
    assert anthropic_api.refused == []


def test_lowering_refuses_broken_transcripts() -> None:
    def request(*messages: TranscriptMessage) -> ProviderRequest:
        return ProviderRequest(MODEL, "", list(messages), [], 100)

    unpaired = request(
        TranscriptMessage(role="user", blocks=[TextBlock(text="hi")]),
        TranscriptMessage(role="assistant", blocks=[ToolUseBlock(id="t1", name="sleep")]),
        TranscriptMessage(role="user", blocks=[TextBlock(text="no result")]),
    )
    with pytest.raises(TranscriptInvariantError, match="without tool_result"):
        lower_request(unpaired)
    with pytest.raises(TranscriptInvariantError, match="no messages"):
        lower_request(request(TranscriptMessage(role="user", blocks=[TextBlock(text="  ")])))
    merged = lower_request(
        request(
            TranscriptMessage(role="user", blocks=[TextBlock(text="a")]),
            TranscriptMessage(role="user", blocks=[TextBlock(text=" ")]),
            TranscriptMessage(role="user", blocks=[TextBlock(text="b")]),
        )
    )
    b = {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}}
    assert merged["messages"] == [{"role": "user", "content": [{"type": "text", "text": "a"}, b]}]


async def test_a_corrupt_transcript_is_never_sent(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    async with rt.store.write() as w:  # a transcript broken behind the runtime's back
        w.append_transcript(
            sid, None, TranscriptMessage(role="user", blocks=[TextBlock(text="hello")])
        )
        w.append_transcript(
            sid,
            None,
            TranscriptMessage(
                role="assistant", blocks=[ToolUseBlock(id="toolu_lost", name="sleep")]
            ),
        )
    await rt.submit(sid, operator("go"))
    await rt.wait_idle()
    assert anthropic_api.requests == [] and anthropic_api.refused == []
    [refused] = await all_events(rt, EventType.PROVIDER_REQUEST_REFUSED)
    assert "toolu_lost" in refused.data.model_dump_json()
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.FAILED
