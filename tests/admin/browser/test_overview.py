"""The console's first page after login is the live board, in a real browser: it starts with
"Nothing running", then, without a reload, says in words what runs now (alice's DM, by its
name, running a tool), what waits for whom (a deploy waiting for alice's approval in the
ops group) and what failed (the answer Telegram refused in that group, with its error); the
session's own page is headed by its conversation's name."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from playwright.async_api import Page, expect

from adapters.server.app import App
from runtime.events import EventType
from tests.adapters.telegram_harness import ALICE
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import GATED, GROUP, NO_RIGHTS, Console, answering, gated_tool
from tests.admin.harness import GLOBAL_TOKEN, start_console
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import wait_for
from tests.topology import Topology

pytestmark = LOOP

OPERATOR = int(ALICE["telegram_user_id"])
DM = f"Telegram, DM with user{OPERATOR}"  # the fake names alice "user1001"
OPS = "Telegram, \u201cOps room\u201d"
ANSWER = "The nightly build is green."
DEPLOY = {
    "name": "deploy",
    "description": "deploys the release",
    "command": ["bash", "-c", "echo deployed"],
    "requires_approval": True,
}


@pytest_asyncio.fixture(loop_scope="session")
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
    gate: Path,
) -> AsyncIterator[App]:
    """The console's App, acme's agent with a tool it is held in and one that asks first."""
    yield await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        agent_tools=("notify_operator", GATED, "deploy"),
        acme_extra={"tools": [gated_tool(gate), DEPLOY]},
        topology=console_topology,
    )
    await asyncio.to_thread(gate.touch)  # the held tool ends: the App stops at once
    await console_topology.stop()


async def test_the_first_page_says_what_runs_waits_and_failed_live_by_conversation_name(
    app: App,
    console: Console,
    page: Page,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    await console.log_in(GLOBAL_TOKEN)
    await console.at("/")
    acme = page.locator('#board section[data-workspace="acme"]')
    globex = page.locator('#board section[data-workspace="globex"]')
    await expect(acme.locator('[data-empty="running"]')).to_have_text("Nothing running.")
    await expect(acme.locator('[data-empty="waiting"]')).to_have_text("Nothing waits for anyone.")
    await expect(acme.locator('[data-empty="failures"]')).to_have_text("Nothing failed today.")
    await page.evaluate("window.stillThisPage = true")

    anthropic_api.script = [text(ANSWER), tools(("deploy", {})), tools((GATED, {}))]
    telegram_api.fail("sendMessage", 400, NO_RIGHTS, when=answering(ANSWER))
    group = {"chat": GROUP, "chat_type": "supergroup", "title": "Ops room"}
    telegram_api.push_message("how is the build?", user=OPERATOR, **group)
    failed = acme.locator('[data-failure="deliveries"]')
    await expect(failed).to_contain_text(f"the answer to {OPS}: ")
    await expect(failed).to_contain_text("Not enough rights to send text messages")
    telegram_api.push_message("deploy the release", user=OPERATOR, **group)
    waiting = acme.locator('[data-waiting="approvals"]')
    await expect(waiting).to_contain_text(
        f"deploy for assistant in {OPS} (user1001) waits for user1001 ("
    )
    await expect(waiting.locator("code")).to_have_text("deploy")  # a tool's name, as code
    telegram_api.push_message("run the checks", user=OPERATOR)
    await wait_for(app.runtime, EventType.TOOL_STARTED, lambda e: e.data.name == GATED)
    running = acme.locator(".running li")
    await expect(running).to_have_count(2)  # the DM's tool, and the deploy that waits
    held = running.filter(has_text=DM)
    await expect(held).to_contain_text(re.compile(rf"assistant: running tool {GATED} for \d+ s"))
    await expect(held.locator("code")).to_have_text(GATED)
    await expect(globex.locator('[data-empty="running"]')).to_have_text("Nothing running.")
    assert await page.evaluate("window.stillThisPage === true"), "no reload: the board is live"

    board_words = re.compile(rf"^running tool {GATED} for \d+ s$")
    await expect(held.locator('[data-field="doing"]')).to_have_text(board_words)
    await held.get_by_role("link", name=DM).click()
    await expect(page.locator("h1")).to_have_text(f"{DM} \u00b7 assistant")
    await expect(page).to_have_title(re.compile(rf"^{DM} \u00b7 assistant \u00b7 acme"))
    # the session's page says what the board says, in the same words, its tool's name as code
    now = page.locator('#session [data-field="doing"]')
    head = page.locator('#turns .turn-head [data-field="doing"]')
    for said in (now, head):
        await expect(said).to_have_text(board_words)
        await expect(said.locator("code")).to_have_text(GATED)
    # and so it goes on saying, live: a second later, from the live feed
    await expect(now).to_have_text(re.compile(rf"^running tool {GATED} for [1-9]\d* s$"))
    await expect(now.locator("code")).to_have_text(GATED)

    # the approvals and deliveries pages name the conversation, not its key
    await console.open("/w/acme/approvals")
    asking = page.locator('#approvals [data-field="conversation"]')
    await expect(asking).to_have_text(f"{OPS} \u00b7 assistant")
    await console.open("/w/acme/deliveries")
    refused = page.locator('#deliveries [data-field="conversation"]')
    await expect(refused).to_have_text([OPS])
    await console.open("/w/acme/")
    rows = page.locator("#sessions tr[data-session]")
    # by name (a group's with who wrote there), oldest first
    await expect(rows.locator("a.session")).to_have_text([f"{OPS} (user1001)", DM])
    await expect(rows.filter(has_text=OPS).locator('[data-field="doing"]')).to_contain_text(
        "waiting for user1001 to approve deploy for "
    )
