"""Long-lived sessions: the transcript the model sees is compacted before it overflows the
context window, through the real SDK against a fake that enforces the window."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from runtime.compaction import SUMMARY_SYSTEM, choose_cut, starts_round
from runtime.events import EventType
from runtime.payloads import ContextCompacted
from runtime.records import RunStatus
from runtime.results import CompactStatus, RuntimeSettings
from runtime.transcript import (
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMessage,
    check_invariants,
    normalize,
)
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.runtime.helpers import all_events, open_runtime, operator, until, wait_for

WINDOW = 3_000
SETTINGS = RuntimeSettings(context_window=WINDOW, max_tokens=200)
FACT = re.compile(r"FACT-\d+: [^\n\"\\]+")


def is_summary_request(body: dict[str, Any]) -> bool:
    return SUMMARY_SYSTEM[:40] in json.dumps(body.get("system", ""))


def summarizer(body: dict[str, Any], **kw: Any) -> Reply:
    """A model that writes a summary holding every fact it was shown."""
    facts = sorted(set(FACT.findall(json.dumps(body["messages"]))))
    return text("Facts the operator gave:\n" + "\n".join(facts or ["none"]), **kw)


def request_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


async def test_hundreds_of_turns_stay_within_a_small_window(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.context_window = WINDOW
    answers = iter(range(10_000))

    def respond(body: dict[str, Any]) -> Reply:
        if is_summary_request(body):
            return summarizer(body)
        return text(f"Noted, answer {next(answers)}. " + "Some words of an answer. " * 8)

    anthropic_api.responder = respond
    rt = await open_runtime(db_path, anthropic_api, settings=SETTINGS)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    turns = 200
    for n in range(turns):
        fact = f"FACT-{n}: the code for door {n} is {7000 + n}. " if n < 3 else ""
        await rt.submit(sid, operator(f"{fact}Message {n}. " + "Some operator words. " * 8))
        await rt.wait_idle(sid)

    finished = await all_events(rt, EventType.TURN_FINISHED)
    assert len(finished) == turns
    assert [e for e in finished if e.data.outcome is not RunStatus.COMPLETED] == []
    assert anthropic_api.refused == [], "every request was valid and within the window"
    compactions = [e.data for e in await all_events(rt, EventType.CONTEXT_COMPACTED)]
    assert len(compactions) >= 5
    assert all(isinstance(c, ContextCompacted) and not c.fallback for c in compactions)
    last = next(b for b in reversed(anthropic_api.requests) if not is_summary_request(b))
    for n in range(3):
        assert f"the code for door {n} is {7000 + n}" in request_text(last), "the summary kept it"
    assert f"Message {turns - 1}." in request_text(last)
    assert len(await rt.store.full_transcript(sid)) == 2 * turns, "the audit keeps every row"
    status = rt.status(sid)
    assert status.context_tokens is not None and status.context_tokens < WINDOW
    assert status.context_window == WINDOW


async def test_an_interjection_during_compaction_reaches_the_next_request(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    """A turn compacts before its second round (asked for with /compact while it ran); an
    operator message sent while the summary is being written is drained right after it."""
    tool_round, summary_written = asyncio.Event(), asyncio.Event()
    anthropic_api.script = [text(f"answer {n}") for n in range(4)]
    anthropic_api.script.append(tools(("sleep", {"seconds": 0}), hold=tool_round))

    def respond(body: dict[str, Any]) -> Reply:
        if is_summary_request(body):
            return summarizer(body, hold=summary_written)
        return text("second round")

    anthropic_api.responder = respond
    rt = await open_runtime(db_path, anthropic_api, settings=SETTINGS)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    for n in range(4):
        await rt.submit(sid, operator(f"FACT-{n}: message {n}"))
        await rt.wait_idle(sid)
    await rt.submit(sid, operator("run the tool"))
    await until(lambda: len(anthropic_api.requests) == 5)
    assert rt.compact(sid) is CompactStatus.AT_NEXT_STEP
    tool_round.set()
    await until(lambda: is_summary_request(anthropic_api.requests[-1]))
    await rt.submit(sid, operator("Stop and look at the logs first"))
    summary_written.set()
    admitted = await wait_for(rt, EventType.OPERATOR_INTERJECTION_ADMITTED)
    assert admitted.data.model_dump()["boundary"] == "after_compaction"
    await rt.wait_idle(sid)
    after_summary = anthropic_api.requests[-1]
    assert not is_summary_request(after_summary)
    assert "Stop and look at the logs first" in request_text(after_summary)
    assert "FACT-0: message 0" in request_text(after_summary), "in the summary, sent first"
    [compacted] = [e.data for e in await all_events(rt, EventType.CONTEXT_COMPACTED)]
    assert isinstance(compacted, ContextCompacted) and compacted.requested


def _round(kind: int, n: int) -> list[TranscriptMessage]:
    user = TranscriptMessage(role="user", blocks=[TextBlock(text=f"prompt {n} " * kind)])
    if kind % 3 == 0:
        return [user, TranscriptMessage(role="assistant", blocks=[TextBlock(text=f"answer {n}")])]
    calls = [ToolUseBlock(id=f"t{n}-{i}", name="sleep", input={}) for i in range(kind % 3)]
    return [
        user,
        TranscriptMessage(role="assistant", blocks=list(calls)),
        TranscriptMessage(
            role="user",
            blocks=[ToolResultBlock(tool_use_id=c.id, content="done " * kind) for c in calls],
        ),
        TranscriptMessage(role="assistant", blocks=[TextBlock(text=f"answer {n}")]),
    ]


def test_a_cut_never_separates_a_tool_use_from_its_result() -> None:
    for seed in range(1, 60):
        rows = [row for n in range(seed % 9 + 1) for row in _round((seed * (n + 3)) % 11, n)]
        for keep in (0, 10, 50, 200, 10_000):
            cut = choose_cut(rows, keep)
            assert cut == 0 or starts_round(rows[cut])
            if cut:
                summary = TranscriptMessage(role="user", blocks=[TextBlock(text="summary")])
                assert check_invariants(normalize([summary, *rows[cut:]])) == []


async def test_a_request_the_provider_finds_too_long_is_compacted_and_sent_again(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    """The estimate can fall short of the provider's count (a tokenizer unlike the last
    one): the refusal is not the end of the turn."""
    anthropic_api.context_window = WINDOW

    def respond(body: dict[str, Any]) -> Reply:
        return summarizer(body) if is_summary_request(body) else text("an answer")

    anthropic_api.responder = respond
    rt = await open_runtime(db_path, anthropic_api, settings=SETTINGS)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    for n in range(15):  # about 1,700 tokens: under the threshold
        await rt.submit(sid, operator(f"FACT-{n}: " + "words of the operator " * 20))
        await rt.wait_idle(sid)
    assert await all_events(rt, EventType.CONTEXT_COMPACTED) == []
    rt.sessions[sid].context.tokens_per_char = 0.1  # now the estimate is 2.5 times too low
    await rt.submit(sid, operator("and now: " + "a long question " * 300))
    await rt.wait_idle(sid)
    runs = await rt.store.runs(session_id=sid)
    assert runs[-1].status is RunStatus.COMPLETED, runs[-1].error
    assert len(anthropic_api.refused) == 1
    [compacted] = [e.data for e in await all_events(rt, EventType.CONTEXT_COMPACTED)]
    assert isinstance(compacted, ContextCompacted) and not compacted.requested
