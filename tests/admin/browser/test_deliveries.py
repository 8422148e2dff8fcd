"""Fixing a failed delivery from the console, in a real browser: Telegram refused the answer
(the bot lost its right to post in the group), the console shows it failed with Telegram's
error; once the group lets the bot post again, Retry delivers it, and the overview's list of
admin actions says who sent which delivery again in words (the group by its name)."""

from __future__ import annotations

from playwright.async_api import Page, expect

from adapters.server.app import App
from tests.adapters.telegram_harness import ALICE, replies
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import GROUP, NO_RIGHTS, Console, answering, delivery_failed
from tests.admin.harness import GLOBAL_TOKEN
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

pytestmark = LOOP

ANSWER = "The nightly build is green."
SHOWN = "Not enough rights to send text messages to the chat"  # as python-telegram-bot says
TITLE = "Acme ops"  # the group's title, as Telegram sends it with each message


async def test_a_failed_delivery_is_shown_with_its_error_and_retry_delivers_it(
    app: App, console: Console, page: Page, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    telegram_api.fail("sendMessage", 400, NO_RIGHTS, when=answering(ANSWER))
    anthropic_api.script = [text(ANSWER)]
    operator = int(ALICE["telegram_user_id"])
    telegram_api.push_message(
        "how is the build?", user=operator, chat=GROUP, chat_type="supergroup", title=TITLE
    )
    failure = await delivery_failed(app)
    assert failure.error is not None and SHOWN in failure.error
    await console.log_in(GLOBAL_TOKEN)
    await console.open("/w/acme/")
    await expect(page.locator("#failed-deliveries")).to_have_text("1")  # the overview says so
    await page.get_by_role("link", name="failed deliveries").click()
    failed = console.delivery(ANSWER)
    await expect(failed.locator('[data-field="status"]')).to_have_text("failed")
    await expect(failed.locator('[data-field="last_error"]')).to_contain_text(SHOWN)
    assert replies(telegram_api, GROUP) == [], "the group never got the answer"
    # the group's admin gives the bot its rights back (the fake's refusal was a one-off)
    await failed.get_by_role("button", name="Retry").click()
    await expect(page.get_by_role("status")).to_contain_text("queued again")
    await until(lambda: [m["text"] for m in replies(telegram_api, GROUP)] == [ANSWER])
    await until(lambda: telegram_api.chat(GROUP) == [ANSWER])
    await console.open("/w/acme/")
    await expect(page.locator("#failed-deliveries")).to_have_text("0")
    retried = page.locator('#admin-actions [data-action="retry_delivery"]')
    # who sent which delivery again, in words: the conversation by its name, no raw ids
    await expect(retried).to_contain_text(
        f"the admin sent a failed delivery again: the answer to Telegram, \u201c{TITLE}\u201d; "
        f"last error: Telegram 400: {SHOWN}"
    )
    for raw in ("dlv_", "turn_result", f"telegram:acme:{GROUP}"):
        await expect(retried).not_to_contain_text(raw)
