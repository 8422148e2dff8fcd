"""An agent's memory in the console, in a real browser (issue 40): alice tells the agent in
her Telegram DM to keep a fact; the admin finds it on the agent's Memory tab with where it
came from, follows it to the session it came from, searches for it, downloads the memory as
JSON and forgets it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.async_api import Page, expect

from adapters.server.app import App
from tests.adapters.telegram_harness import ALICE, replies
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import Console
from tests.admin.harness import ACME_TOKEN
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

pytestmark = LOOP

DEPLOY = "Our deploy window is Tuesdays 14:00 UTC"


async def test_an_admin_finds_follows_exports_and_forgets_a_memory(
    app: App,
    console: Console,
    page: Page,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    tmp_path: Path,
) -> None:
    anthropic_api.script = [tools(("remember", {"text": DEPLOY})), text("Noted.")]
    operator = int(ALICE["telegram_user_id"])
    telegram_api.push_message("Remember: our deploy window is Tuesdays 14:00 UTC", user=operator)
    await until(lambda: len(replies(telegram_api, operator)) == 1, wait_s=20)

    await console.log_in(ACME_TOKEN)
    await console.open("/w/acme/")
    await page.locator("nav.sub").get_by_role("link", name="Memory").click()
    await console.at("/w/acme/memory/assistant")
    kept = page.locator("#memories tr[data-memory]")
    await expect(kept).to_have_count(1)
    await expect(kept.locator('[data-field="text"]')).to_have_text(DEPLOY)
    await expect(kept.locator('[data-field="scope"]')).to_have_text("operator")
    await expect(kept.locator('[data-field="operator"]')).to_have_text("alice")
    await kept.locator('[data-field="source"] a').click()  # the session it came from
    await expect(page).to_have_url(re.compile(re.escape(console.base) + r"/w/acme/sessions/\w+$"))
    await expect(page.get_by_text("Remember: our deploy window").first).to_be_visible()

    await page.go_back()
    await page.get_by_label("Search").fill("deploy window")
    await page.get_by_role("button", name="Search").click()
    await expect(kept).to_have_count(1)
    await page.get_by_label("Search").fill("payroll")
    await page.get_by_role("button", name="Search").click()
    await expect(page.locator("#no-memories")).to_have_text("No memory matches that search.")
    await page.get_by_role("link", name="Show all").click()
    await expect(kept).to_have_count(1)

    async with page.expect_download() as downloading:
        await page.get_by_role("link", name="Export as JSON").click()
    download = await downloading.value
    assert download.suggested_filename == "memory-acme-assistant.json"
    await download.save_as(tmp_path / "memory.json")
    [exported] = json.loads((tmp_path / "memory.json").read_text())["memories"]
    assert exported["text"] == DEPLOY and exported["scope"] == "operator"
    assert exported["session_id"] and exported["message_id"], "where it came from"

    await kept.get_by_role("button", name="Forget").click()
    await expect(page.get_by_role("status")).to_contain_text("is forgotten")
    await expect(kept).to_have_count(0)
    assert await app.runtime.memories.export("acme/assistant") == []
