"""The console as the README shows it, in a real browser: a workspace's overview, and a
session's page with a turn waiting for an operator's approval, one running and one finished.
Each state is checked; with SWITCHBOARD_SCREENSHOTS naming a folder, each page is also saved
there as a PNG (overview.png, session-approval.png, session-running.png,
session-finished.png), so a normal run leaves the repository as it was. From the top folder:

    SWITCHBOARD_SCREENSHOTS=docs/screenshots \
        .venv/bin/pytest tests/admin/browser/test_screenshots.py
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from adapters.server.app import App
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.session_walk import OPERATOR, start, turn
from tests.admin.browser.walk import GATED, Console
from tests.admin.harness import ACME_TOKEN
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology, topology_started

pytestmark = LOOP

FOLDER = os.environ.get("SWITCHBOARD_SCREENSHOTS")
DESKTOP = {"width": 1280, "height": 800}
DEPLOYED = "Release 1.4 is on db1."
CHECKED = "All checks passed."


@pytest_asyncio.fixture(loop_scope="session", params=["inline"])
async def console_topology(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Topology]:
    """One topology: the pages are the same in each."""
    async for started in topology_started(request, tmp_path):
        yield started


@pytest_asyncio.fixture(loop_scope="session")
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
    gate: Path,
) -> AsyncIterator[App]:
    yield await start(console_topology, db_path, anthropic_api, telegram_api, slack_api, gate)
    await console_topology.stop()  # while the fakes still answer


async def shoot(page: Page, name: str) -> None:
    if FOLDER:
        await asyncio.to_thread(Path(FOLDER).mkdir, parents=True, exist_ok=True)
        await page.screenshot(path=Path(FOLDER) / f"{name}.png", full_page=True)


async def test_the_overview_and_a_session_waiting_running_and_finished(
    console: Console,
    page: Page,
    app: App,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    gate: Path,
) -> None:
    await page.set_viewport_size(DESKTOP)
    await turn(anthropic_api, telegram_api, "how full is the disk?", tools(("check_disk", {})))
    [session] = [s.id for s in app.runtime.sessions.values()]
    await console.log_in(ACME_TOKEN)
    await console.open(f"/w/acme/sessions/{session}")
    doing = page.locator('#session [data-field="doing"]')
    newest = page.locator("#turns > li.turn").first

    deploy = tools(("deploy", {"release": "1.4", "host": "db1"}), say="Deploying 1.4 to db1.")
    anthropic_api.script = [deploy, text(DEPLOYED)]
    telegram_api.push_message("deploy release 1.4 to db1", user=OPERATOR)
    await expect(doing).to_have_text(re.compile(r"^waiting for .+ to approve deploy for \d+ s$"))
    await page.reload()
    waiting = newest.locator('li.call[data-outcome="waiting for approval"]')
    await waiting.locator("summary").click()
    await shoot(page, "session-approval")

    await console.open("/w/acme/approvals")
    await page.get_by_role("button", name="Approve").click()
    await until(lambda: DEPLOYED in telegram_api.chat(OPERATOR), wait_s=30)

    anthropic_api.script = [tools((GATED, {}), say="Running the checks."), text(CHECKED)]
    telegram_api.push_message("run the checks", user=OPERATOR)
    await console.open(f"/w/acme/sessions/{session}")
    await expect(doing).to_have_text(re.compile(rf"^running tool {GATED} for \d+ s$"))
    await page.reload()
    await expect(newest).to_have_attribute("data-status", "running")
    await shoot(page, "session-running")
    await console.open("/w/acme/")
    await shoot(page, "overview")

    await console.open(f"/w/acme/sessions/{session}")
    await asyncio.to_thread(gate.touch)
    await until(lambda: CHECKED in telegram_api.chat(OPERATOR), wait_s=30)
    await expect(newest).to_have_attribute("data-status", "completed")  # live, on the page shown
    await expect(newest.locator(".turn-head .outcome")).to_have_text(re.compile(r"^answered in "))
    await expect(page.locator("#turns > li.turn")).to_have_count(3)
    await expect(newest.locator('[data-role="agent"] .text').last).to_have_text(CHECKED)
    await shoot(page, "session-finished")
