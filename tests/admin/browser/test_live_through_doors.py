"""The console's live overview behind the door process, as `switchboard run` serves it on
SQLite: an admin logs in on the one port, opens acme's overview and keeps it open; an operator
writes on Telegram (a webhook through the door process) and the admin sees the session go to
running, at its model round, and back to idle, without reloading the page. The live events
come through the door process's proxy as they happen: the page has no other way to update."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
from playwright.async_api import Page, expect

from tests.adapters.doors.test_door_process import (
    ADMIN_TOKEN,
    SECRET,
    config,
    echo,
    post_update,
    run,
    until,
    update,
)
from tests.admin.browser.chromium import LOOP
from tests.fakes.anthropic_api import FakeAnthropic, Reply
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram

pytestmark = LOOP


async def test_the_overview_follows_a_turn_live_through_the_door_process(
    tmp_path: Path,
    page: Page,
    anthropic_api: FakeAnthropic,
    slack_api: FakeSlack,
    telegram_api: FakeTelegram,
) -> None:
    answered = asyncio.Event()  # the model answers once this is set
    answered.set()

    def held_echo(body: dict[str, Any]) -> Reply:
        return replace(echo(body), hold=answered)

    anthropic_api.responder = held_echo
    server = await run(config(tmp_path, slack_api, telegram_api, anthropic_api.url), "sb")
    try:
        base = f"http://127.0.0.1:{server.port}"

        def said(words: str) -> bool:
            return any(words in m["text"] for m in telegram_api.sent())

        async with aiohttp.ClientSession() as http:
            assert await post_update(http, server.port, update(701, "first"), SECRET) == 200
            await until(lambda: said("answer to first"))  # acme has one session, idle
            await page.goto(f"{base}/admin/login")
            await page.get_by_label("Admin token").fill(ADMIN_TOKEN)
            await page.get_by_role("button", name="Log in").click()
            await page.wait_for_load_state()
            await page.goto(f"{base}/admin/w/acme/")
            row = page.locator("#sessions tr[data-session]")
            doing = row.locator('[data-field="doing"]')
            await expect(doing).to_have_text("idle")
            await page.evaluate("window.stillThisPage = true")

            answered.clear()
            assert await post_update(http, server.port, update(702, "second"), SECRET) == 200
            await expect(row).to_have_attribute("data-state", "running")
            await expect(doing).to_have_text(re.compile(r"^thinking \(model call\) for \d+ s$"))
            answered.set()
            await until(lambda: said("answer to second"))
            await expect(row).to_have_attribute("data-state", "idle")
            await expect(doing).to_have_text("idle")
        assert await page.evaluate("window.stillThisPage === true"), "no reload: it came live"
    finally:
        answered.set()
        await server.stop()
