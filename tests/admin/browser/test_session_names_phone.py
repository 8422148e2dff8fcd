"""On a phone (390 x 844), in a real browser: alice's DM had a session before `/new` and has
one since, whose agent spawned a child. The workspace's page names all three, the child by
its parent's name and its task, with no id in sight (one is only a link's tooltip), and the
page and the child's own page fit the screen's width (issue 43: ids ran off it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from playwright.async_api import Page, expect

from adapters.server.app import App
from tests.adapters.telegram_harness import ALICE
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.test_phone import fits
from tests.admin.browser.walk import PHONE, Console
from tests.admin.harness import GLOBAL_TOKEN, start_console
from tests.admin.test_session_names_pages import DM, FRESH, SHORT_TASK, answer
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

pytestmark = LOOP

OPERATOR = int(ALICE["telegram_user_id"])


@pytest_asyncio.fixture(loop_scope="session")
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    yield await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        agent_tools=("spawn_agent",),
        topology=console_topology,
    )
    await console_topology.stop()


async def test_a_phone_reads_every_session_by_name(
    app: App,
    console: Console,
    page: Page,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    anthropic_api.script = [text("first answer")]
    telegram_api.push_message("hello", user=OPERATOR)
    await until(lambda: "first answer" in telegram_api.chat(OPERATOR), wait_s=20)
    telegram_api.push_message("/new", user=OPERATOR)
    await until(lambda: FRESH in str(telegram_api.chat(OPERATOR)), wait_s=20)
    anthropic_api.responder = answer
    telegram_api.push_message("look after the logs", user=OPERATOR)
    await until(lambda: len(app.runtime.sessions) == 3, wait_s=20)
    await app.runtime.wait_idle()
    earlier, current, child = sorted(
        (s.record for s in app.runtime.sessions.values()), key=lambda r: r.created_at
    )

    await page.set_viewport_size(PHONE)
    await console.log_in(GLOBAL_TOKEN)
    await console.open("/w/acme/")
    names = page.locator("#sessions a.session")
    await expect(names).to_have_count(3)
    said = await names.all_inner_texts()
    assert said[0].startswith(f"{DM}, since ")
    assert said[1] == f"child of {DM}: {SHORT_TASK}"
    assert said[2].startswith(f"{DM}, ") and said[2].endswith(", ended by /new")
    assert [await n.get_attribute("title") for n in await names.all()] == [
        current.id,
        child.id,
        earlier.id,
    ], "an id only as the tooltip"
    assert "ses_" not in await page.locator("main").inner_text()
    await fits(page)
    await names.nth(1).click()
    await expect(page.locator("h1")).to_have_text(
        f"child of {DM}: {SHORT_TASK} \u00b7 assistant/child-1"
    )
    assert "ses_" not in await page.locator("h1").inner_text()
    await fits(page)
