"""The Schedules tab in a real browser: acme's admin opens it from the workspace's tabs, sees a
schedule every two seconds that has run, pauses it and resumes it, and each time sees its state
and its buttons change; the page fits a phone. The admin edits a schedule's prompt from its
row and sees the new prompt on the page; the form fits a phone too. With SWITCHBOARD_SCREENSHOTS
naming a folder, the page (with a wake-up the agent set and the schedule's runs) is also saved
there as schedules.png, and a schedule's edit form as schedule_edit.png."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from adapters.server.app import App
from tests.adapters.telegram_harness import ALICE
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import PHONE, Console
from tests.admin.harness import ACME_TOKEN, start_console
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology, topology_started

pytestmark = LOOP

FOLDER = os.environ.get("SWITCHBOARD_SCREENSHOTS")
OPERATOR = int(ALICE["telegram_user_id"])
REMIND = "remind me to look at the deploy queue"
SCHEDULES = [
    {
        "id": "queue-check",
        "agent": "assistant",
        "every": "2s",
        "prompt": "Check the deploy queue; tell me only if something is stuck.",
        "deliver": "silent",  # its answers do not queue up in chat for the App's stop
    },
    {
        "id": "morning-report",
        "agent": "assistant",
        "cron": "0 9 * * 1-5",
        "timezone": "Europe/Berlin",
        "prompt": "Summarise last night's alerts.",
        "enabled": False,
    },
]


def answer(body: dict[str, Any]) -> Reply:
    """The model: alice's request sets a wake-up for tomorrow; a scheduled run answers."""
    if REMIND in json.dumps(body["messages"][-1]):
        return tools(("schedule_wakeup", {"when": "1d", "note": "Look at the deploy queue."}))
    return text("Nothing is stuck.")


@pytest_asyncio.fixture(loop_scope="session", params=["inline"])
async def console_topology(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Topology]:
    """One topology: the page is the same in each (tests/admin/test_schedules_page.py steers
    it over HTTP on every console topology)."""
    async for started in topology_started(request, tmp_path):
        yield started


@pytest_asyncio.fixture(loop_scope="session")
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    anthropic_api.responder = answer
    yield await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        agent_tools=("notify_operator", "schedule_wakeup"),
        acme_extra={"schedules": SCHEDULES},
        server={"schedule_min_every": "1s"},  # runs within the test's seconds
        topology=console_topology,
    )
    await console_topology.stop()  # while the fakes still answer


async def answered(app: App) -> None:
    """Until a run of the schedule has answered."""
    async with asyncio.timeout(20):
        while True:
            runs = await app.bridge.automation.recent_runs("acme")
            if any(r.outcome == "completed" for r in runs):
                return
            await asyncio.sleep(0.05)


async def test_pause_then_resume_a_schedule_every_two_seconds(
    console: Console, page: Page, app: App, telegram_api: FakeTelegram
) -> None:
    telegram_api.push_message(REMIND, user=OPERATOR)
    await until(lambda: bool(app.bridge.automations.wakeups("acme")), wait_s=20)
    await answered(app)
    await page.set_viewport_size({"width": 1280, "height": 800})
    await console.log_in(ACME_TOKEN)
    await console.open("/w/acme/")
    await page.locator("nav.sub").get_by_role("link", name="Schedules").click()
    await console.at("/w/acme/schedules")
    row = page.locator('#schedules tr[data-schedule="queue-check"]')
    state, after = row.locator('[data-field="state"]'), row.locator('[data-field="next"]')
    pause, resume = (
        row.get_by_role("button", name="Pause"),
        row.get_by_role("button", name="Resume"),
    )
    await expect(state).to_have_text("runs")
    await expect(after).to_have_text(re.compile(r"UTC$"))
    await expect(row.locator('[data-field="last"]')).to_contain_text(re.compile("answered|started"))
    await expect(page.locator('#wakeups [data-field="note"]')).to_have_text(
        "Look at the deploy queue."
    )
    await expect(page.locator('#runs tr[data-outcome="completed"]').first).to_contain_text(
        "answered"
    )
    if FOLDER:
        await asyncio.to_thread(Path(FOLDER).mkdir, parents=True, exist_ok=True)
        await page.screenshot(path=Path(FOLDER) / "schedules.png", full_page=True)

    await pause.click()
    await expect(page.get_by_role("status")).to_have_text(
        "Schedule queue-check is paused: it does not run until it is resumed."
    )
    await expect(state).to_have_text("paused by admin acme/lead")
    await expect(after).to_have_text("\u2014")
    await expect(pause).to_have_count(0)
    await resume.click()
    await expect(page.get_by_role("status")).to_contain_text("Schedule queue-check runs again")
    await expect(state).to_have_text("runs")
    await expect(after).to_have_text(re.compile(r"UTC$"))
    await expect(resume).to_have_count(0)
    await expect(pause).to_be_visible()
    await page.set_viewport_size(PHONE)
    await page.reload()
    sideways = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    assert await page.evaluate(sideways) <= 0, "the page fits a phone"


async def test_an_edited_prompt_is_what_the_schedule_asks(
    console: Console, page: Page, app: App
) -> None:
    """acme's admin opens a schedule's Edit from its row, changes its prompt (a typed
    `${VAR}` included: kept as typed) and saves: the Schedules page says what changed and
    shows the new prompt; the form opened again holds it."""
    typed = "Summarise last night's alerts for ${TEAM}; skip the ones already closed."
    await console.log_in(ACME_TOKEN)
    await console.open("/w/acme/schedules")
    row = page.locator('#schedules tr[data-schedule="morning-report"]')
    asks = row.locator('[data-field="prompt"]')
    await expect(asks).to_have_text("Summarise last night's alerts.")
    await row.get_by_role("link", name="Edit").click()
    await console.at("/w/acme/schedules/morning-report/edit")
    await expect(page.get_by_role("heading", name="Schedule morning-report")).to_be_visible()
    await expect(page.get_by_role("textbox", name="Cron")).to_have_value("0 9 * * 1-5")
    await expect(page.get_by_role("combobox", name="Timezone")).to_have_value("Europe/Berlin")
    await expect(page.get_by_role("checkbox", name="Enabled")).not_to_be_checked()
    await page.get_by_role("textbox", name="Prompt").fill(typed)
    if FOLDER:
        await page.screenshot(path=Path(FOLDER) / "schedule_edit.png", full_page=True)
    await page.get_by_role("button", name="Save").click()
    await console.at("/w/acme/schedules")
    await expect(page.get_by_role("status")).to_have_text(
        "Schedule morning-report changed (prompt): cron 0 9 * * 1-5 (Europe/Berlin), "
        "agent assistant, off."
    )
    await expect(asks).to_have_text(typed)
    await row.get_by_role("link", name="Edit").click()
    await expect(page.get_by_role("textbox", name="Prompt")).to_have_value(typed)
    await page.set_viewport_size(PHONE)
    await page.reload()
    sideways = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    assert await page.evaluate(sideways) <= 0, "the form fits a phone"
    [acme] = [w for w in app.config.workspaces if w.id == "acme"]
    assert [s.prompt for s in acme.schedules if s.id == "morning-report"] == [typed]
