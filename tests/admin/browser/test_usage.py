"""The Usage tab in a real browser: acme's admin opens it from the workspace's tabs while a
budget holds alice's turn, sees the chart of the last 30 days (drawn as SVG, one bar a day,
today's the tallest), today's spend, the budgets with their bars, and the held turn; Approve
spend lets the turn go on and the page says so. The page fits a phone. With
SWITCHBOARD_SCREENSHOTS naming a folder, the page is also saved there as usage.png."""

from __future__ import annotations

import asyncio
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
from tests.admin.harness import ACME_TOKEN
from tests.admin.usage_config import DAILY_TOKENS, usage_config
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology, topology_started

pytestmark = LOOP

FOLDER = os.environ.get("SWITCHBOARD_SCREENSHOTS")
OPERATOR = int(ALICE["telegram_user_id"])
MONTHLY_USD = {"scope": "agent", "id": "assistant", "period": "month", "limit_usd": 5.0}
DONE = "All three deploys are green."


@pytest_asyncio.fixture(loop_scope="session", params=["inline"])
async def console_topology(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Topology]:
    """One topology: the page is the same in each (tests/admin/test_usage_page.py reads and
    steers it over HTTP on every console topology)."""
    async for started in topology_started(request, tmp_path):
        yield started


@pytest_asyncio.fixture(loop_scope="session")
async def app(
    console_topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    budgets = [DAILY_TOKENS, MONTHLY_USD]
    path = usage_config(console_topology, anthropic_api, telegram_api, slack_api, budgets)
    yield await console_topology.start(path)
    await console_topology.stop()  # while the fakes still answer


async def test_the_usage_tab_charts_the_days_and_approves_a_held_turn(
    console: Console, page: Page, app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    approved = asyncio.Event()

    def answer(body: dict[str, Any]) -> Reply:
        """A tool call each round (each a little different: no loop) until the approval."""
        if approved.is_set():
            return text(DONE)
        return tools(("sleep", {"seconds": len(body["messages"]) / 1000}))

    anthropic_api.responder = answer
    telegram_api.push_message("watch the three deploys", user=OPERATOR)
    await until(lambda: any(s.running and s.running.held for s in app.runtime.sessions.values()))
    await page.set_viewport_size({"width": 1280, "height": 900})
    await console.log_in(ACME_TOKEN)
    await console.open("/w/acme/")
    await page.locator("nav.sub").get_by_role("link", name="Usage").click()
    await console.at("/w/acme/usage")

    chart = page.locator("#per-day svg")
    await expect(chart.locator("rect.bar")).to_have_count(30)
    today = chart.locator("g.day").last
    tallest = await chart.locator("rect.bar").evaluate_all(
        "bars => bars.map(b => b.getBBox().height)"
    )
    assert tallest[-1] == max(tallest) > 10 * min(tallest), "today's bar is the tall one"
    cost = await page.locator('#totals tr[data-period="today"] [data-field="cost"]').inner_text()
    said = await today.locator("title").text_content() or ""
    assert re.search(rf": {re.escape(cost)} and [\d,]+ tokens$", said), "dollars and tokens"
    await expect(page.locator("#budgets tr[data-budget]")).to_have_count(2)
    monthly = page.locator('#budgets tr[data-budget="agent:assistant/month"]')
    await expect(monthly.locator("meter")).to_be_visible()
    held = page.locator("#held tr[data-session]")
    await expect(held.locator('[data-field="reason"]')).to_contain_text(
        "it would pass the workspace's daily budget of 1,000 tokens"
    )
    if FOLDER:
        await asyncio.to_thread(Path(FOLDER).mkdir, parents=True, exist_ok=True)
        await page.screenshot(path=Path(FOLDER) / "usage.png", full_page=True)

    approved.set()
    await held.get_by_role("button", name="Approve spend").click()
    await expect(page.get_by_role("status")).to_have_text(
        "Approved: assistant's turn goes on past its budget, for one more step of it "
        "(this turn only); past that it waits again."
    )
    await expect(page.locator("#no-held")).to_have_text("No turn is waiting on a budget.")
    await until(lambda: DONE in telegram_api.chat(OPERATOR), wait_s=20)
    await page.set_viewport_size(PHONE)
    await page.reload()
    sideways = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    assert await page.evaluate(sideways) <= 0, "the page fits a phone"
