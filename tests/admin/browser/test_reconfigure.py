"""Reconfiguring a workspace from the console, in a real browser: acme's admin hands the
operator's seat from alice to carol on acme's settings page; carol's next message is taken
(and alice's no longer is) while a turn in globex, on Slack, runs on untouched."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from playwright.async_api import Page, expect

from adapters.server.app import App
from bridge import texts
from tests.adapters.slack_harness import BOB, GLOBEX_SECRET, SlackSide
from tests.adapters.telegram_harness import ALICE
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import Console
from tests.admin.harness import ACME_TOKEN
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

pytestmark = LOOP

CAROL = 1003
GLOBEX_JOB, GLOBEX_ANSWER = "migrate the billing database", "Billing is migrated."
CAROL_ANSWER = "Hello carol, how can I help?"


def answers(held: asyncio.Event) -> Callable[[dict[str, Any]], Reply]:
    """The model: globex's job is held until `held` is set; anyone else is answered."""

    def reply(body: dict[str, Any]) -> Reply:
        if GLOBEX_JOB in str(body["messages"]):
            return text(GLOBEX_ANSWER, hold=held)
        return text(CAROL_ANSWER)

    return reply


async def test_a_new_operator_is_heard_at_once_while_another_workspace_runs_on(
    app: App,
    console: Console,
    page: Page,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> None:
    held = asyncio.Event()
    anthropic_api.responder = answers(held)
    slack = SlackSide(app, slack_api)
    await slack.say(GLOBEX_JOB, team="T2", secret=GLOBEX_SECRET, user=BOB, channel="DBOB")
    await until(lambda: len(anthropic_api.requests) == 1)  # globex's turn is running
    telegram_api.push_message("hello", user=CAROL)
    await until(lambda: bool(telegram_api.chat(CAROL)))
    assert telegram_api.chat(CAROL) == [texts.NOT_AN_OPERATOR], "carol is no operator yet"

    await console.log_in(ACME_TOKEN)
    await console.open("/w/acme/config")
    operators = page.locator("table.operators")
    await expect(operators.locator('input[name="op-0-id"]')).to_have_value("alice")
    await operators.locator('input[name="op-0-remove"]').check()
    await operators.locator('input[name="op-new-id"]').fill("carol")
    await operators.locator('input[name="op-new-telegram_user_id"]').fill(str(CAROL))
    await operators.locator('input[name="primary"][value="new"]').check()
    await page.get_by_role("button", name="Apply").click()
    # one notice, the workspace's changed keys under the line that names it
    said = page.get_by_role("status").locator("p")
    await expect(said.first).to_have_text("workspaces changed: acme")
    await expect(said.nth(1)).to_contain_text("acme: operators.alice removed")
    await expect(operators.locator('input[name="op-0-id"]')).to_have_value("carol")

    telegram_api.push_message("hello again", user=CAROL)
    await until(lambda: CAROL_ANSWER in telegram_api.chat(CAROL))
    alice = int(ALICE["telegram_user_id"])
    telegram_api.push_message("am I still heard?", user=alice)
    await until(lambda: bool(telegram_api.chat(alice)))
    assert telegram_api.chat(alice) == [texts.NOT_AN_OPERATOR], "alice is no longer one"

    held.set()  # globex's turn, which ran through acme's change, finishes
    await until(lambda: [m["text"] for m in slack_api.posts("DBOB")] == [GLOBEX_ANSWER])
    globex_requests = [r for r in anthropic_api.requests if GLOBEX_JOB in str(r["messages"])]
    assert len(globex_requests) == 1, "globex's turn was not restarted"
