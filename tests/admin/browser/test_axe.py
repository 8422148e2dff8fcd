"""Every console page under axe-core, in Debian's Chromium, at a desktop's and a phone's width:
no critical or serious violation. The pages hold live data first: a turn that answered, a
schedule that ran, a deploy waiting for alice's approval, so their tables are not empty.

The console's Content Security Policy forbids the script axe injects: the check's browser
context bypasses it (and only the check's: every other browser test runs with it). One
browser, one context per width, one page reused from page to page."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from axe_playwright_python.async_playwright import Axe  # type: ignore[import-untyped]
from playwright.async_api import Browser, Page, expect

from adapters.server.app import App
from bridge.admin.schedules import ScheduleSteering
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.conftest import WAIT_MS
from tests.admin.browser.session_walk import OPERATOR, tools
from tests.admin.browser.walk import GATED, PHONE
from tests.admin.harness import GLOBAL_TOKEN, start_console
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.anthropic_api import tools as calls
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology, topology_started

pytestmark = LOOP

DESKTOP = {"width": 1280, "height": 800}
FAILING = {"critical", "serious"}
SCHEDULES = [
    {
        "id": "pulse",
        "agent": "assistant",
        "every": "1h",
        "prompt": "Look at the deploy queue, the failed jobs of the night and the disk of each "
        "build host; tell me only what is stuck or full, with the job's link.",
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
# the workspace's tabs, and what the pages link to (a session, its audit, a schedule's form)
TABS = [
    "",
    "deliveries",
    "notifications",
    "approvals",
    "schedules",
    "schedules/add",
    "schedules/pulse/edit",
    "usage",
    "providers",
    "memory",
    "pairing",
    "config",
]


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
    anthropic_api.responder = lambda body: text("Nothing is stuck.")
    yield await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        agent_tools=("notify_operator", "check_disk", "read_log", "deploy", GATED),
        acme_extra={"tools": tools(gate), "schedules": SCHEDULES},
        topology=console_topology,
    )
    await console_topology.stop()  # while the fakes still answer


async def live_data(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> asyncio.Event:
    """A turn that answered after a tool call and a notification, a run of `pulse`, and a
    deploy waiting for alice's approval, whose request is still being sent (Telegram answers
    it once the returned event is set): Deliveries shows it, several lines long."""
    anthropic_api.script = [
        calls(("check_disk", {"path": "/"}), ("notify_operator", {"message": "Disk is fine."})),
        text("Done: the disk."),
    ]
    telegram_api.push_message("check the disk", user=OPERATOR)
    await until(lambda: "Done: the disk." in telegram_api.chat(OPERATOR), wait_s=30)
    await ScheduleSteering(app.bridge).run_now("acme", "pulse", "lead")
    async with asyncio.timeout(30):
        while True:
            runs = await app.bridge.automation.recent_runs("acme")
            if any(r.outcome == "completed" for r in runs):
                break
            await asyncio.sleep(0.05)
    anthropic_api.script = [calls(("deploy", {"release": "1.4"})), text("Deployed.")]
    held = telegram_api.gate("sendMessage", lambda params: "wants to run deploy" in params["text"])
    telegram_api.push_message("deploy 1.4", user=OPERATOR)
    return held


async def pages(page: Page, base: str) -> list[str]:
    """Every page to check: the board, each tab of acme, a session and its audit trail; the
    last is Settings, for its Reload from file."""
    paths = ["/admin/", *(f"/admin/w/acme/{tab}" for tab in TABS)]
    await page.goto(base + "/admin/w/acme/approvals")
    session = page.locator('#approvals [data-field="conversation"] a')
    await expect(session).to_have_count(1)
    href = await session.get_attribute("href")
    assert href
    return [*paths[:-1], href, href + "/audit", "/admin/w/acme/memory/assistant", paths[-1]]


def described(url: str, width: int, violation: dict[str, Any]) -> list[str]:
    return [
        f"{url} at {width}px: {violation['id']} ({violation['impact']}): "
        f"{violation['help']}: {' '.join(node['target'])}"
        for node in violation["nodes"]
    ]


async def test_no_serious_violation_on_any_page_at_either_width(
    browser: Browser, app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    held = await live_data(app, anthropic_api, telegram_api)
    base, axe, found = f"http://127.0.0.1:{app.port}", Axe(), []
    for size in (DESKTOP, PHONE):
        context = await browser.new_context(viewport=size, bypass_csp=True)  # type: ignore[arg-type]
        context.set_default_timeout(WAIT_MS)
        page = await context.new_page()
        await page.goto(base + "/admin/login")
        found += await check(page, axe, size["width"])
        await page.get_by_label("Admin token").fill(GLOBAL_TOKEN)
        await page.get_by_role("button", name="Log in").click()
        await page.wait_for_load_state()
        for path in await pages(page, base):
            await page.goto(base + path)
            await expect(page.locator("h1")).to_have_count(1)
            found += await check(page, axe, size["width"])
            found += await titled(page, path) if size is DESKTOP else []
            found += await one_line_headers(page, path) if size is DESKTOP else []
            found += await stray_labels(page, path) if size is PHONE else []
        # the page a global admin's Reload from file (on Settings) answers with
        await page.get_by_role("button", name="Reload from file").click()
        await expect(page.get_by_role("heading", name="Config reload")).to_be_visible()
        found += await check(page, axe, size["width"])
        await context.close()
    held.set()
    assert found == [], "axe found:\n" + "\n".join(found)


async def one_line_headers(page: Page, path: str) -> list[str]:
    """On a desktop, a column's header is on one line (not "State" a letter a line)."""
    wrapped = await page.locator("th").evaluate_all(
        "hs => hs.filter(h => !h.querySelector('.visually-hidden')).filter(h => {"
        " const r = document.createRange(); r.selectNodeContents(h);"
        " return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size > 1; })"
        ".map(h => h.textContent.trim())"
    )
    return [f"{path}: the header {h!r} wraps" for h in wrapped]


async def stray_labels(page: Page, path: str) -> list[str]:
    """On a phone a row is a card, each cell after its column's name: a cell with no name (a
    row's buttons) gets no stray ": " before it."""
    stray = await page.locator("table.stack td:not([data-label])").evaluate_all(
        "tds => tds.filter(td => getComputedStyle(td, '::before').content.includes(':'))"
        ".map(td => td.innerText.trim())"
    )
    return [f"{path}: a stray ': ' before {text!r}" for text in stray]


async def titled(page: Page, path: str) -> list[str]:
    """A workspace's page is titled "Page · workspace · Switchboard"."""
    title = await page.title()
    scheme = r".+ · acme · Switchboard" if "/w/acme/" in path else r".+ · Switchboard"
    if re.fullmatch(scheme, title) and "ses_" not in title:
        return []
    return [f"{path}: the title {title!r} is not 'Page · workspace · Switchboard'"]


async def check(page: Page, axe: Axe, width: int) -> list[str]:
    result = await axe.run(page)
    url = re.sub(r"^https?://[^/]+", "", page.url)
    return [
        line
        for v in result.response["violations"]
        if v["impact"] in FAILING
        for line in described(url, width, v)
    ]
