"""Issue 17, DM pairing, end to end through python-telegram-bot against the fake Bot API and
the console script as an admin types it: a stranger's DM gets a code (one per sender, a rare
reminder, none past the cap, none in groups), the primary operator gets Approve and Deny
buttons, approving (by button or `switchboard pairing approve`) makes the sender an operator
from their next message, deny and revoke; nothing a stranger wrote reaches the model."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from bridge.events import BridgeEventType
from tests.adapters.approvals.telegram_approvals import buttons, press
from tests.adapters.cli_process import run_to_end
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

ALICE, BOB, CAROL, DAVE = 1001, 4242, 4343, 4444
CODE = re.compile(r"Your pairing code is ([A-Z2-9]{8})\.")
KEY = "\U0001f511"


async def start(
    db_path: Path, anthropic_api: FakeAnthropic, telegram: FakeTelegram, **pairing: Any
) -> App:
    settings = {"enabled": True, **pairing}
    return await start_app(db_path, anthropic_api, telegram, acme_extra={"pairing": settings})


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    app = await start(db_path, anthropic_api, telegram_api)
    yield app
    await app.stop()


def code_of(telegram: FakeTelegram, user: int) -> str | None:
    found = [CODE.search(t) for t in telegram.chat(user)]
    return next((m.group(1) for m in found if m), None)


def asks(telegram: FakeTelegram) -> list[dict[str, Any]]:
    """The pairing requests the primary operator (alice) was sent."""
    return [
        m
        for m in telegram.posted.values()
        if m["chat"]["id"] == ALICE and m["text"].startswith(KEY)
    ]


def model_saw(anthropic: FakeAnthropic, words: str) -> bool:
    return words in str(anthropic.requests)


def decisions_logged(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The log's "pairing decided" lines, by their fields."""
    return [vars(r) for r in caplog.records if r.getMessage() == "pairing decided"]


async def test_a_stranger_gets_one_code_and_the_primary_operator_approves_it(
    app: App,
    db_path: Path,
    telegram_api: FakeTelegram,
    anthropic_api: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="bridge.pairing")
    telegram_api.push_message("hi, let me in", user=BOB)
    await until(lambda: code_of(telegram_api, BOB) is not None)
    code = code_of(telegram_api, BOB)
    assert code is not None and not set(code) & set("01OI")
    await until(lambda: bool(asks(telegram_api)))
    [ask] = asks(telegram_api)
    assert f"user{BOB} (id {BOB} on telegram) asks to become an operator of acme" in ask["text"]
    assert code in ask["text"] and buttons(ask) == ["approval_approve", "approval_deny"]

    telegram_api.push_message("second try", user=BOB)  # no second code: one reminder
    telegram_api.push_message("third try", user=BOB)  # no more reminders for now
    await until(lambda: any("still waiting" in t for t in telegram_api.chat(BOB)))
    await app.bridge.settle()
    assert len(telegram_api.chat(BOB)) == 2
    ledger = str([e.data for e in await app.runtime.store.events_after(0)])
    assert "InboundRefused" in ledger and code not in ledger, "the code is in no audit line"

    press(telegram_api, "approval_approve", ask, user=DAVE)  # a stranger's press: refused
    await app.bridge.settle()
    assert not any("now an operator" in t for t in telegram_api.chat(BOB))

    press(telegram_api, "approval_approve", ask)
    await until(lambda: any("You are now an operator of acme" in t for t in telegram_api.chat(BOB)))
    await until(lambda: any(t.startswith("Approved: user4242") for t in telegram_api.chat(ALICE)))
    [line] = decisions_logged(caplog)
    assert (line["decision"], line["sender_id"], line["by"]) == ("approved", str(BOB), "alice")
    assert code not in caplog.text, "a code is never logged"
    anthropic_api.script = [text("hello Bob")]
    telegram_api.push_message("what can you do?", user=BOB)
    await until(lambda: "hello Bob" in telegram_api.chat(BOB), wait_s=20)
    assert model_saw(anthropic_api, "what can you do?")
    for before in ("hi, let me in", "second try", "third try"):
        assert not model_saw(anthropic_api, before), "nothing from before is replayed"


async def test_the_cli_lists_approves_and_revokes_and_the_process_tells_the_sender(
    app: App, db_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    telegram_api.push_message("hello?", user=BOB)
    await until(lambda: code_of(telegram_api, BOB) is not None)
    code = code_of(telegram_api, BOB)
    assert code is not None
    config = str(db_path.parent / "switchboard.toml")
    status, out = await run_to_end("pairing", "list", "--config", config)
    assert status == 0 and f"{code}  acme telegram {BOB} (user{BOB})" in out, out
    status, out = await run_to_end("pairing", "approve", code.lower(), "--config", config)
    assert status == 0 and f"approved: user{BOB} on telegram (acme)" in out, out
    await until(lambda: any("now an operator" in t for t in telegram_api.chat(BOB)), wait_s=10)
    status, out = await run_to_end("status", "--config", config)
    assert f"acme telegram {BOB} (user{BOB}), approved by cli (" in out, out
    status, out = await run_to_end("check-config", "--config", config)
    assert status == 0 and f"  workspace acme: telegram {BOB} (user{BOB})" in out, out
    status, out = await run_to_end("pairing", "approve", code, "--config", config)
    assert status == 1 and "already answered: approved" in out

    status, out = await run_to_end(
        "pairing",
        "revoke",
        "--workspace",
        "acme",
        "--platform",
        "telegram",
        "--user",
        str(BOB),
        "--config",
        config,
    )
    assert status == 0, out
    await until(lambda: any("no longer an operator" in t for t in telegram_api.chat(BOB)))
    telegram_api.push_message("am I still in?", user=BOB)
    await until(lambda: sum(1 for t in telegram_api.chat(BOB) if CODE.search(t)) == 2)
    assert not model_saw(anthropic_api, "am I still in?")
    status, out = await run_to_end("pairing", "approve", "ZZZZZZZZ", "--config", config)
    assert status == 1 and "no pairing code ZZZZZZZZ" in out


async def test_strangers_writing_at_once_never_pass_the_cap(
    db_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    """Each conversation is handed on side by side: the cap is read and a code written by
    one stranger's message at a time, or all of them would find room for one."""
    app = await start(db_path, anthropic_api, telegram_api, max_pending=2)
    strangers = [5000 + n for n in range(8)]
    try:
        for user in strangers:
            telegram_api.push_message("let me in", user=user)
        for _ in range(1000):  # until every message is recorded as refused
            events = await app.runtime.store.events_after(0)
            if sum(e.type == BridgeEventType.INBOUND_REFUSED for e in events) == len(strangers):
                break
            await asyncio.sleep(0.01)
        await app.bridge.settle()
        given = [u for u in strangers if code_of(telegram_api, u) is not None]
        assert len(given) == 2, f"codes given to {given}"
        assert len(asks(telegram_api)) == 2
    finally:
        await app.stop()


async def test_deny_the_cap_and_groups(
    db_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    app = await start(db_path, anthropic_api, telegram_api, max_pending=1)
    try:
        telegram_api.push_message("let me in", user=BOB)
        await until(lambda: bool(asks(telegram_api)))
        telegram_api.push_message("me too", user=CAROL)  # past the cap: nothing new
        telegram_api.push_message(
            "@switchboard_test_bot me in the group", user=DAVE, chat=-100, chat_type="supergroup"
        )
        await app.bridge.settle()
        assert code_of(telegram_api, CAROL) is None and telegram_api.chat(CAROL) == []
        said = [*telegram_api.chat(-100), *telegram_api.chat(DAVE)]
        assert not any(CODE.search(t) for t in said), "groups never pair"
        assert (
            await app.bridge.pairing.records.open_request("acme", "telegram", str(DAVE), 0) is None
        )
        press(telegram_api, "approval_deny", asks(telegram_api)[0])
        await until(lambda: any("was declined" in t for t in telegram_api.chat(BOB)))
        telegram_api.push_message("please?", user=BOB)
        await app.bridge.settle()
        assert sum(1 for t in telegram_api.chat(BOB) if CODE.search(t)) == 1
        assert anthropic_api.requests == [], "no stranger's words reached the model"
    finally:
        await app.stop()


async def test_a_restart_keeps_pending_codes(
    db_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    app = await start(db_path, anthropic_api, telegram_api)
    try:
        telegram_api.push_message("hello", user=BOB)
        await until(lambda: code_of(telegram_api, BOB) is not None)
        await app.bridge.settle()
    finally:
        await app.stop()
    code = code_of(telegram_api, BOB)
    config = str(db_path.parent / "switchboard.toml")
    status, out = await run_to_end("pairing", "list", "--config", config)
    assert status == 0 and f"{code}  acme telegram {BOB}" in out, "the code outlives the process"
    app = await start(db_path, anthropic_api, telegram_api)
    try:
        telegram_api.push_message(f"/approve {code}", user=ALICE)
        # a restarted app's first poll and reply: slow on a loaded machine, not a wrong answer
        await until(lambda: any("now an operator" in t for t in telegram_api.chat(BOB)), 30)
    finally:
        await app.stop()


async def test_an_expired_code_is_refused_and_the_sender_may_ask_again(
    db_path: Path,
    telegram_api: FakeTelegram,
    anthropic_api: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="bridge.pairing")
    app = await start(db_path, anthropic_api, telegram_api, code_ttl_s=1)
    try:
        telegram_api.push_message("hello", user=BOB)
        await until(lambda: code_of(telegram_api, BOB) is not None)
        code = code_of(telegram_api, BOB)
        await asyncio.sleep(1.1)
        telegram_api.push_message(f"/approve {code}", user=ALICE)
        await until(lambda: any(f"{code} has expired" in t for t in telegram_api.chat(ALICE)))
        [line] = decisions_logged(caplog)
        assert (line["decision"], line["sender_id"]) == ("expired", str(BOB))
        telegram_api.push_message("hello again", user=BOB)
        await until(lambda: sum(1 for t in telegram_api.chat(BOB) if CODE.search(t)) == 2)
    finally:
        await app.stop()


async def test_an_approve_that_read_the_code_before_a_deny_committed_pairs_nobody(
    app: App,
    telegram_api: FakeTelegram,
    anthropic_api: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Alice presses Deny while Carol's `/approve CODE` is between its read of the code (still
    pending) and its write (issue 38): Deny stands, Bob is paired with nobody, and Carol is
    told Alice's answer, not "Approved"."""
    telegram_api.push_message("let me in", user=BOB)
    await until(lambda: bool(asks(telegram_api)) and code_of(telegram_api, BOB) is not None)
    code = code_of(telegram_api, BOB)
    assert code is not None
    pairing = app.bridge.pairing
    stale = await pairing.records.request(code)  # Carol's read: pending
    press(telegram_api, "approval_deny", asks(telegram_api)[0])
    await until(lambda: any("was declined" in t for t in telegram_api.chat(BOB)))

    fresh = pairing.records.request
    reads = iter([stale])
    monkeypatch.setattr(pairing.records, "request", lambda c: _first(reads, fresh, c))
    [acme] = [w for w in app.config.workspaces if w.id == "acme"]
    said = await pairing.answer(code, True, acme, "carol")

    assert said == "That pairing request was already answered: denied by alice."
    assert await pairing.records.paired("acme", "telegram", str(BOB)) is None
    telegram_api.push_message("am I in?", user=BOB)
    await app.bridge.settle()
    assert anthropic_api.requests == [], "a denied sender never reaches the model"


async def _first(reads: Any, fresh: Any, code: str) -> Any:
    """The stale read once, then the store's."""
    stale = next(reads, None)
    return stale if stale is not None else await fresh(code)
