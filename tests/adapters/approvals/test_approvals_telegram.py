"""Issue 15, operator approval, end to end through python-telegram-bot against the fake Bot
API: a tool marked `requires_approval` does not run until an operator presses Approve on the
request the bot posts (or types /approve); Deny, no answer in time, and /stop each answer the
call without running it; a stranger's press is refused and audited; a restart while waiting
shows the buttons again and the tool runs once."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from bridge import texts
from bridge.events import BridgeEventType, InboundRefused
from runtime.events import EventType
from runtime.records import ApprovalStatus
from tests.adapters.approvals.telegram_approvals import (
    ALICE,
    APPROVE,
    DENY,
    STRANGER,
    approval_messages,
    buttons,
    press,
    quiet,
    runs,
    start,
)
from tests.fakes.anthropic_api import FakeAnthropic, Reply, after_tools, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until, wait_for

SECRET_INPUT = {"host": "db1", "password": "hunter2", "note": "uses TOKEN"}


@pytest.fixture
async def app(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    app = await start(db_path, tmp_path, anthropic_api, telegram_api)
    yield app
    await app.stop()


async def asked(
    telegram: FakeTelegram, anthropic: FakeAnthropic, host: str = "db1"
) -> dict[str, Any]:
    """Alice asks for a deploy; the model calls the tool; the approval request arrives."""
    anthropic.script = [tools(("deploy", {"host": host})), text(f"{host} is deployed")]
    telegram.push_message(f"deploy {host}", user=ALICE)
    await until(lambda: bool(approval_messages(telegram)), wait_s=20)
    return approval_messages(telegram)[-1]


def decisions_logged(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The log's "approval decided" lines, by their fields."""
    return [vars(r) for r in caplog.records if r.getMessage() == "approval decided"]


async def test_the_tool_waits_for_approve_and_then_runs_once(
    app: App,
    tmp_path: Path,
    telegram_api: FakeTelegram,
    anthropic_api: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="runtime.approvals")
    request = await asked(telegram_api, anthropic_api)
    assert buttons(request) == [APPROVE, DENY]
    assert (
        "acme/assistant" not in request["text"]
        and "assistant wants to run deploy" in request["text"]
    )
    assert '"host": "db1"' in request["text"]
    await quiet(app)
    assert runs(tmp_path) == [], "nothing runs before an operator approves"
    assert len(anthropic_api.requests) == 1, "the turn waits; the model is not asked again"
    press(telegram_api, APPROVE, request)
    await until(lambda: "db1 is deployed" in telegram_api.chat(ALICE), wait_s=20)
    assert runs(tmp_path) == [{"host": "db1"}]
    assert any(t.startswith("Approved: deploy runs now.") for t in telegram_api.chat(ALICE))
    [result] = anthropic_api.tool_results()
    assert "deployed db1" in result["content"] and not result.get("is_error")
    [decided] = [e async for e in events(app, EventType.APPROVAL_DECIDED)]
    assert decided.data.status is ApprovalStatus.APPROVED and decided.data.decided_by == "alice"
    press(telegram_api, APPROVE, request)  # pressed again: answered already, nothing runs
    await until(
        lambda: any("already answered: approved by alice" in t for t in telegram_api.chat(ALICE))
    )
    assert len(runs(tmp_path)) == 1
    [line] = decisions_logged(caplog)  # one line, though the button was pressed twice
    assert (line["decision"], line["by"], line["tool"]) == ("approved", "alice", "deploy")


async def test_deny_answers_the_call_with_an_error_and_the_transcript_stays_valid(
    app: App, tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    request = await asked(telegram_api, anthropic_api)
    anthropic_api.script = [text("understood, not deploying")]
    press(telegram_api, DENY, request)
    await until(lambda: "understood, not deploying" in telegram_api.chat(ALICE), wait_s=20)
    assert runs(tmp_path) == []
    [result] = anthropic_api.tool_results()
    assert result["is_error"] is True
    assert "denied by operator alice" in result["content"]
    assert anthropic_api.refused == []


async def test_a_strangers_press_is_refused_and_audited(
    app: App, tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    request = await asked(telegram_api, anthropic_api)
    press(telegram_api, APPROVE, request, user=STRANGER)

    refused = await wait_for(app.runtime, BridgeEventType.INBOUND_REFUSED)
    assert isinstance(refused.data, InboundRefused)
    assert refused.data.sender_id == str(STRANGER)
    await quiet(app)
    assert runs(tmp_path) == []
    [pending] = await app.runtime.approvals.pending(list(app.runtime.sessions))
    assert pending.status is ApprovalStatus.PENDING
    press(telegram_api, APPROVE, request)
    await until(lambda: "db1 is deployed" in telegram_api.chat(ALICE), wait_s=20)
    assert runs(tmp_path) == [{"host": "db1"}]


async def test_typed_approve_answers_the_one_waiting_call(
    app: App, tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    await asked(telegram_api, anthropic_api)
    telegram_api.push_message("/approve", user=ALICE)
    await until(lambda: "db1 is deployed" in telegram_api.chat(ALICE), wait_s=20)
    assert runs(tmp_path) == [{"host": "db1"}]
    telegram_api.push_message("/deny", user=ALICE)
    await until(lambda: any("No tool call here is waiting" in t for t in telegram_api.chat(ALICE)))


async def test_an_interjection_while_waiting_reaches_the_model_after_the_result(
    app: App, tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    request = await asked(telegram_api, anthropic_api)
    telegram_api.push_message("and tell me the version", user=ALICE)
    await until(lambda: len(app.runtime.sessions[sid(app)].queue) == 1)
    press(telegram_api, APPROVE, request)
    await until(lambda: "db1 is deployed" in telegram_api.chat(ALICE), wait_s=20)
    last = anthropic_api.requests[-1]["messages"][-1]
    kinds = [b["type"] for b in last["content"]]
    assert kinds[0] == "tool_result" and "and tell me the version" in str(last["content"])
    assert anthropic_api.refused == []


async def test_stop_while_waiting_stops_the_turn_and_nothing_runs(
    app: App, tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    request = await asked(telegram_api, anthropic_api)
    telegram_api.push_message("/stop", user=ALICE)
    await until(lambda: "Stopped." in telegram_api.chat(ALICE), wait_s=20)
    press(telegram_api, APPROVE, request)
    await until(
        lambda: any("already answered: the turn was stopped" in t for t in telegram_api.chat(ALICE))
    )
    assert runs(tmp_path) == []
    assert "db1 is deployed" not in telegram_api.chat(ALICE)
    anthropic_api.script = [text("fresh start")]
    telegram_api.push_message("hello again", user=ALICE)
    await until(lambda: "fresh start" in telegram_api.chat(ALICE), wait_s=20)
    assert anthropic_api.refused == [], "the stopped call was answered: the transcript is valid"


async def test_no_answer_in_time_is_a_no(
    db_path: Path,
    tmp_path: Path,
    telegram_api: FakeTelegram,
    anthropic_api: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="runtime.approvals")
    app = await start(db_path, tmp_path, anthropic_api, telegram_api, timeout_s=1.0)
    try:
        anthropic_api.script = [tools(("deploy", {"host": "db1"})), text("nobody answered")]
        telegram_api.push_message("deploy db1", user=ALICE)
        await until(lambda: "nobody answered" in telegram_api.chat(ALICE), wait_s=20)
        assert runs(tmp_path) == []
        [result] = anthropic_api.tool_results()
        assert result["is_error"] and "approval timed out" in result["content"]
        assert any(
            t.startswith("No operator answered within 1 s") for t in telegram_api.chat(ALICE)
        )
        [line] = decisions_logged(caplog)
        assert line["decision"] == "timed_out" and "by" not in line
    finally:
        await app.stop()


async def test_the_request_masks_secrets_in_the_input(
    app: App, tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [
        tools(("deploy", {**SECRET_INPUT, "note": f"uses {telegram_api.token}"})),
        text("done"),
    ]
    telegram_api.push_message("deploy db1", user=ALICE)
    await until(lambda: bool(approval_messages(telegram_api)), wait_s=20)
    [request] = approval_messages(telegram_api)
    assert "hunter2" not in request["text"] and telegram_api.token not in request["text"]
    assert request["text"].count("[redacted]") == 2


async def test_a_restart_while_waiting_shows_the_buttons_again_and_runs_once(
    db_path: Path, tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    app = await start(db_path, tmp_path, anthropic_api, telegram_api)
    first = await asked(telegram_api, anthropic_api)
    await quiet(app)
    await app.stop()
    app = await start(db_path, tmp_path, anthropic_api, telegram_api)
    try:
        await until(lambda: len(approval_messages(telegram_api)) == 2, wait_s=20)
        again = approval_messages(telegram_api)[-1]
        assert again["text"].startswith("(Switchboard restarted; this call still waits")
        assert buttons(again) == [APPROVE, DENY]
        assert runs(tmp_path) == []
        press(telegram_api, APPROVE, first)  # the old message's buttons still work
        answer = texts.RESUMED_ANSWER.format(answer="db1 is deployed")  # it went on
        await until(lambda: answer in telegram_api.chat(ALICE), wait_s=20)
        press(telegram_api, APPROVE, again)
        await until(lambda: any("already answered" in t for t in telegram_api.chat(ALICE)))
        await app.bridge.settle()
        assert runs(tmp_path) == [{"host": "db1"}], "run once, after the restart"
        assert anthropic_api.refused == []
    finally:
        await app.stop()


async def events(app: App, kind: str) -> AsyncIterator[Any]:
    for event in await app.runtime.store.events_after(0):
        if event.type == kind:
            yield event


def sid(app: App) -> str:
    return next(iter(app.runtime.sessions))


async def test_a_childs_call_asks_in_its_parents_conversation(
    db_path: Path, tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    child_steps = [tools(("deploy", {"host": "db2"})), text("child deployed db2")]

    def respond(body: dict[str, Any]) -> Reply:
        if "private child agent" in str(body.get("system", "")):
            return child_steps.pop(0)
        return text("spawned" if after_tools(body) else "parent heard back")

    anthropic_api.script = [tools(("spawn_agent", {"task": "deploy db2"}))]
    anthropic_api.responder = respond
    app = await start(db_path, tmp_path, anthropic_api, telegram_api)
    try:
        telegram_api.push_message("have a helper deploy db2", user=ALICE)
        await until(lambda: bool(approval_messages(telegram_api)), wait_s=20)
        [request] = approval_messages(telegram_api)
        assert "Agent assistant/child-1 wants to run deploy" in request["text"]
        assert runs(tmp_path) == []
        telegram_api.push_message("/approve", user=ALICE)  # typed in the parent's chat
        await until(lambda: runs(tmp_path) == [{"host": "db2"}], wait_s=20)
        await until(lambda: "parent heard back" in telegram_api.chat(ALICE), wait_s=20)
        assert anthropic_api.refused == []
    finally:
        await app.stop()
