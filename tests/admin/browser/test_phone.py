"""The console on a phone-sized screen (390 x 844): each page fits its width, so nothing needs
a sideways scroll, with a turn running and a failed delivery to fill them."""

from __future__ import annotations

import asyncio

from playwright.async_api import Page, expect

from adapters.server.app import App
from tests.adapters.telegram_harness import ALICE
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import GROUP, NO_RIGHTS, PHONE, Console, answering, delivery_failed
from tests.admin.harness import GLOBAL_TOKEN
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

pytestmark = LOOP

WIDER_THAN_THE_SCREEN = """() => {
    const width = document.documentElement.clientWidth;
    return [...document.querySelectorAll("body *")]
        .filter(e => e.getBoundingClientRect().right > width + 1)
        .map(e => e.outerHTML.slice(0, 120));
}"""


PAGES = [  # after logging in; and one session's page, reached from the overview
    "/",
    "/w/acme/",
    "/w/globex/",
    "/w/acme/deliveries",
    "/w/acme/notifications",
    "/w/acme/config",
]


async def fits(page: Page) -> None:
    # Measured as a person sees the page, its stylesheets applied: a page reached by a click
    # may still be loading them (a loaded machine), and unstyled it is as wide as its text.
    await page.wait_for_load_state("load")
    sideways = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert sideways <= 0, (page.url, await page.evaluate(WIDER_THAN_THE_SCREEN))


async def test_every_page_fits_a_phone(
    app: App,
    console: Console,
    page: Page,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    """With alice's long question keeping a turn running in acme, and an answer in acme's
    group failed (with Telegram's long error), waiting for the admin."""
    held = asyncio.Event()
    question = "please summarize the incident report of last night, with its timeline " * 3
    green = "The build is green."
    anthropic_api.script = [text("Summary.", hold=held), text(green)]
    alice = int(ALICE["telegram_user_id"])
    telegram_api.push_message(question, user=alice)
    await until(lambda: len(anthropic_api.requests) == 1)
    telegram_api.fail("sendMessage", 400, NO_RIGHTS, when=answering(green))
    telegram_api.push_message("how is the build?", user=alice, chat=GROUP, chat_type="supergroup")
    await delivery_failed(app)

    await page.set_viewport_size(PHONE)
    await console.open("/login")
    await fits(page)
    await console.log_in(GLOBAL_TOKEN)
    for path in PAGES:
        await console.open(path)
        await fits(page)
    await console.open("/w/acme/")
    await page.locator('#sessions tr[data-state="running"] a.session').click()
    await expect(page.locator("#session")).to_have_attribute("data-state", "running")
    await fits(page)
    held.set()
