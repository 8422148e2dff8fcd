"""An admin with a keyboard only (Tab, Enter, Space and typing), in a real browser: logs in,
skips the header with the skip link, edits a schedule (a wrong value first: the focus comes
back to that field, marked invalid, its message in the admin's words) and saves it, then
approves a deploy waiting for approval. Each step's outcome is read on the page; nothing is
clicked. At the end, the titles read 'Page · workspace · Switchboard', the Schedules page's
buttons say which schedule they act on and no table header is empty."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from adapters.server.app import App
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.session_walk import OPERATOR, tools
from tests.admin.browser.walk import GATED, Console
from tests.admin.harness import ACME_TOKEN, start_console
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.anthropic_api import tools as calls
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology, topology_started

pytestmark = LOOP

MOST_TABS = 60  # Tab presses to reach anything on a page
SCHEDULES = [{"id": "pulse", "agent": "assistant", "every": "1h", "prompt": "Anything stuck?"}]
FOCUSED = "document.activeElement"


@pytest_asyncio.fixture(loop_scope="session", params=["inline"])
async def console_topology(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Topology]:
    """One topology: a keyboard reads the same pages in each."""
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


async def focused_name(page: Page) -> str:
    """What a screen reader says the focused element is: its aria-label or its text."""
    said = await page.evaluate(
        f"{FOCUSED}.getAttribute('aria-label') || {FOCUSED}.innerText || {FOCUSED}.name || ''"
    )
    return " ".join(str(said).split())


async def tab_to(page: Page, name: str | re.Pattern[str]) -> None:
    """Tab until the focused element is `name` (exactly, or matching the pattern)."""
    seen = []
    for _ in range(MOST_TABS):
        await page.keyboard.press("Tab")
        said = await focused_name(page)
        if said == name if isinstance(name, str) else name.fullmatch(said):
            return
        seen.append(said)
    raise AssertionError(f"{name!r} is not reached by Tab; the Tab stops were: {seen}")


async def test_log_in_edit_a_schedule_and_approve_a_call_by_keyboard(
    console: Console,
    page: Page,
    app: App,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    anthropic_api.script = [calls(("deploy", {"release": "1.4"})), text("Deployed.")]
    telegram_api.push_message("deploy 1.4", user=OPERATOR)
    await until(lambda: any("deploy" in t for t in telegram_api.chat(OPERATOR)), wait_s=30)

    await console.open("/login")
    await expect(page.get_by_label("Admin token")).to_be_focused()
    await page.keyboard.type("not-a-token")
    await page.keyboard.press("Enter")
    token = page.get_by_label("Admin token")  # refused: the field says so, and has the focus
    await expect(token).to_be_focused()
    await expect(token).to_have_attribute("aria-invalid", "true")
    await expect(token).to_have_accessible_description("That token is not an admin's.")
    await page.keyboard.type(ACME_TOKEN)
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("button", name="Log out")).to_be_visible()

    await tab_to(page, "acme")
    await page.keyboard.press("Enter")
    await console.at("/w/acme/")
    await page.keyboard.press("Tab")
    assert await focused_name(page) == "Skip to the content", "the first Tab stop of a page"
    await page.keyboard.press("Enter")
    assert await page.evaluate(f"{FOCUSED}.id") == "main", "the skip link moves the focus"

    await tab_to(page, "Schedules")
    await page.keyboard.press("Enter")
    await console.at("/w/acme/schedules")
    await tab_to(page, "Edit pulse")
    await page.keyboard.press("Enter")
    await console.at("/w/acme/schedules/pulse/edit")
    await tab_to(page, "every")
    await page.keyboard.press("ControlOrMeta+a")
    await page.keyboard.type("soon")
    await tab_to(page, "Save")
    await page.keyboard.press("Enter")

    # refused: the focus is back on the field, marked, its message in the admin's words
    every = page.get_by_role("textbox", name="Every")
    await expect(every).to_be_focused()
    await expect(every).to_have_attribute("aria-invalid", "true")
    await expect(every).to_have_accessible_description(
        "'soon' is not a duration; write a number and a unit: 90s, 15m, 2h, 1d"
    )
    await expect(page.get_by_role("alert")).to_contain_text("Not saved")
    assert "workspaces[" not in await page.locator("main").inner_text(), "no config key paths"
    await page.keyboard.press("ControlOrMeta+a")
    await page.keyboard.type("2h")
    await tab_to(page, "Save")
    await page.keyboard.press("Space")
    await console.at("/w/acme/schedules")
    await expect(page.get_by_role("status")).to_have_text(
        "Schedule pulse changed (every): every 2h, agent assistant."
    )
    row = page.locator('#schedules tr[data-schedule="pulse"]')
    await expect(row.locator('[data-field="timing"]')).to_have_text("every 2h")
    for button in ("Pause schedule pulse", "Run now schedule pulse"):
        await expect(row.get_by_role("button", name=button, exact=True)).to_be_visible()
    await expect(page).to_have_title("Schedules · acme · Switchboard")
    headers = await page.locator("th").evaluate_all(
        "hs => hs.filter(h => !h.textContent.trim()).length"
    )
    assert headers == 0, "every column header says what the column is"

    await tab_to(page, "Approvals")
    await page.keyboard.press("Enter")
    await console.at("/w/acme/approvals")
    await tab_to(page, re.compile(r"Approve deploy call \S+"))
    await page.keyboard.press("Space")
    await expect(page.get_by_role("status")).to_have_text(re.compile(r"^Approved apr_\w+\.$"))
    await expect(page.locator("#no-approvals")).to_be_visible()
    await until(lambda: "Deployed." in telegram_api.chat(OPERATOR), wait_s=30)


async def test_a_refused_setting_is_marked_on_its_field_and_focused(
    console: Console, page: Page, app: App
) -> None:
    """The settings form refused twice, by the form (a Telegram id that is not a number) and by
    the config (a tool the workspace does not have): each time the field is named, marked
    invalid with its message in the admin's words, and has the focus."""
    await console.log_in(ACME_TOKEN)
    await console.open("/w/acme/config")
    await expect(page).to_have_title("Settings · acme · Switchboard")
    alice = page.get_by_role("textbox", name="Telegram user id of operator alice")
    await alice.fill("alice")
    await page.get_by_role("button", name="Apply").click()
    await expect(alice).to_be_focused()
    await expect(alice).to_have_attribute("aria-invalid", "true")
    await expect(alice).to_have_accessible_description(
        "operator alice: a Telegram user id is a number, not 'alice'"
    )
    await alice.fill(str(OPERATOR))
    tools_field = page.get_by_role("textbox", name="Tools (comma-separated)")
    await tools_field.fill("notify_operator, no_such_tool")
    await page.get_by_role("button", name="Apply").click()
    await expect(page.get_by_role("alert")).to_contain_text("no_such_tool")
    await expect(tools_field).to_be_focused()
    await expect(tools_field).to_have_attribute("aria-invalid", "true")
    await expect(tools_field).to_have_accessible_description(re.compile("no_such_tool"))
    assert "workspaces[" not in await page.locator("main").inner_text(), "no config key paths"
