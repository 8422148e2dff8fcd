"""An admin reads a session in the console, in a real browser: its turns newest first, a page
at a time (a page stays the same as new turns come), each tool call one line that opens to
its input and result (a long result cut, and said so); its audit trail in words; and every
page of a workspace keeps the workspace's tabs."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from adapters.server.app import App
from bridge.admin import history
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.session_walk import DISK, LOG_CHARS, OPERATOR, start, turn
from tests.admin.browser.walk import Console
from tests.admin.harness import ACME_TOKEN
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology

pytestmark = LOOP

DM = f"Telegram, DM with user{OPERATOR}"  # the fake names alice "user1001"
WAITS = re.compile(rf"^waiting for user{OPERATOR} to approve deploy for \d+ s$")
MOST_PX = 2_000  # the page of three turns with tool calls (it was 11,900 px of JSON)


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


def acme_session(app: App) -> str:
    [found] = [s.id for s in app.runtime.sessions.values() if s.record.agent_id == "acme/assistant"]
    return found


async def test_three_turns_read_newest_first_with_each_tool_call_on_one_line(
    console: Console,
    page: Page,
    app: App,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await turn(anthropic_api, telegram_api, "check the disk", tools(("check_disk", {"path": "/"})))
    await turn(anthropic_api, telegram_api, "read the log", tools(("read_log", {"lines": 500})))
    both = tools(("check_disk", {"path": "/var"}), ("check_disk", {"path": "/home"}), say="Both.")
    await turn(anthropic_api, telegram_api, "check /var and /home", both)
    await console.log_in(ACME_TOKEN)
    await console.open(f"/w/acme/sessions/{acme_session(app)}")

    turns = page.locator("#turns > li.turn")
    await expect(turns).to_have_count(3)
    newest = turns.nth(0)
    await expect(newest.locator('[data-role="operator"]')).to_contain_text("check /var and /home")
    said = newest.locator('[data-role="agent"] .text')  # each round's words, the answer last
    await expect(said).to_have_text(["Both.", "Done: check /var and /home."])
    await expect(turns.nth(2).locator('[data-role="operator"]')).to_contain_text("check the disk")
    height = await page.evaluate("document.documentElement.scrollHeight")
    print(f"the session page after three turns with tool calls: {height} px high")
    assert height < MOST_PX, f"the page is {height} px high"

    calls = newest.locator("li.call")
    await expect(calls).to_have_count(2)
    call = calls.nth(0)
    summary, detail = call.locator("summary"), call.locator(".detail")
    await expect(summary.locator(".tool")).to_have_text("check_disk")
    await expect(summary.locator(".input")).to_have_text("/var")
    await expect(summary.locator(".outcome")).to_have_text("ok")
    await expect(summary.locator(".took")).to_have_text(re.compile(r"^\d+(\.\d)? s$"))
    box = await summary.bounding_box()
    assert box is not None and box["height"] < 30, "a tool call is one line"
    await expect(detail).to_be_hidden()
    await summary.click()
    await expect(detail.locator("pre").nth(0)).to_contain_text('"path": "/var"')
    await expect(detail.locator("pre").nth(1)).to_have_text(DISK)

    read_log = turns.nth(1).locator("li.call")
    await read_log.locator("summary").click()
    await expect(read_log.locator("pre").nth(1)).to_have_text("x" * history.DETAIL_LIMIT)
    cut = f"Cut here: {LOG_CHARS:,} characters in all, the first {history.DETAIL_LIMIT:,} shown."
    await expect(read_log.locator("p.cut")).to_have_text(cut)

    await page.get_by_role("link", name="Audit trail").click()
    audit = page.locator("#audit")
    await expect(audit).to_contain_text("operator alice sent a message: it starts a turn")
    await expect(audit).to_contain_text(re.compile(r"tool check_disk ran \d+(\.\d)? s, ok"))
    await expect(audit).to_contain_text(re.compile(r"agent answered \(\d+ chars\)"))
    await expect(audit).to_contain_text("agent asked for 2 tool calls")
    assert "assistant_text" not in await audit.inner_text(), "events read in words"

    # a turn waits for alice's approval: the page's Now (live, then as loaded), its turn's head
    # and the overview's board say it in the same words, the tool's name as code
    anthropic_api.script = [tools(("deploy", {"release": "1.4"})), text("Deployed.")]
    await console.open(f"/w/acme/sessions/{acme_session(app)}")
    telegram_api.push_message("deploy 1.4", user=OPERATOR)
    now = page.locator('#session [data-field="doing"]')
    await expect(now).to_have_text(WAITS)
    await expect(now.locator("code")).to_have_text("deploy")
    await page.reload()
    for said in (now, page.locator('#turns .turn-head [data-field="doing"]')):
        await expect(said).to_have_text(WAITS)
        await expect(said.locator("code")).to_have_text("deploy")
    assert "`" not in await page.locator("main").inner_text(), "names as code, not backticks"
    await console.open("/w/acme/")
    await expect(page.locator('#sessions [data-field="doing"]')).to_have_text(WAITS)
    await console.open("/w/acme/approvals")
    asking = page.locator('#approvals [data-field="conversation"]')
    await expect(asking).to_have_text(f"{DM} \u00b7 assistant")


async def test_turns_are_paged_and_a_page_stays_put_as_new_turns_come(
    console: Console,
    page: Page,
    app: App,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(history, "TURNS_PER_PAGE", 2)
    for ask in ("first", "second", "third"):
        await turn(anthropic_api, telegram_api, ask, tools(("check_disk", {"path": "/"})))
    await console.log_in(ACME_TOKEN)
    await console.open(f"/w/acme/sessions/{acme_session(app)}")
    asked = page.locator('#turns > li.turn [data-role="operator"] .text')
    newer, older = (page.get_by_role("link", name=f"{w} turns") for w in ("Newer", "Older"))
    await expect(asked).to_have_text(["third", "second"])
    await expect(newer).to_have_count(0)
    await older.click()
    await expect(asked).to_have_text(["first"])
    await expect(older).to_have_count(0)

    await turn(anthropic_api, telegram_api, "fourth", tools(("check_disk", {"path": "/"})))
    ended = page.locator("#announce p").last  # the page heard of the turn, live
    await expect(ended).to_contain_text(": turn ended: answered in ")
    await expect(asked).to_have_text(["first"])  # and an older page stays as it is
    await page.reload()
    await expect(asked).to_have_text(["first"])  # the same page, though a turn came
    await newer.click()
    await expect(asked).to_have_text(["third", "second"])
    await newer.click()
    await expect(asked).to_have_text(["fourth", "third"])
    await expect(newer).to_have_count(0)


async def test_every_workspace_page_keeps_the_workspace_tabs(
    console: Console, page: Page, app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    await turn(anthropic_api, telegram_api, "hello")
    session = acme_session(app)
    await console.log_in(ACME_TOKEN)
    tabs = [
        "Overview",
        "Deliveries",
        "Notifications",
        "Approvals",
        "Schedules",
        "Usage",
        "Providers",
        "Memory",
        "Pairing",
        "Settings",
    ]
    for path, here in (
        ("/w/acme/config", "Settings"),
        (f"/w/acme/sessions/{session}", "Overview"),
        (f"/w/acme/sessions/{session}/audit", "Overview"),
        ("/w/acme/deliveries", "Deliveries"),
        ("/w/acme/schedules", "Schedules"),
        ("/w/acme/usage", "Usage"),
        ("/w/acme/providers", "Providers"),
        ("/w/acme/memory/assistant", "Memory"),
    ):
        await console.open(path)
        nav = page.locator("nav.sub")
        await expect(nav.get_by_role("link")).to_have_text(tabs)
        await expect(nav.locator('[aria-current="page"]')).to_have_text(here)
    await console.open("/w/acme/config")
    connections = page.locator("#connections")
    await expect(connections).to_contain_text("polling")  # acme's Telegram bot
    await expect(page.locator("#add-connection")).to_contain_text("Not connected to Slack")
    await expect(page.locator("#add-connection")).to_contain_text("[workspaces.slack]")
