"""The console on a phone-sized screen (390 x 844): each page fits its width, so nothing needs
a sideways scroll, with a turn running to fill the overview."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Page

from tests.adapters.telegram_harness import ALICE
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import PHONE, Console
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


async def fits(page: Page) -> None:
    sideways = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert sideways <= 0, (page.url, await page.evaluate(WIDER_THAN_THE_SCREEN))


@pytest_asyncio.fixture(loop_scope="session")
async def phone(
    console: Console, page: Page, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[Console]:
    """Logged in on a phone, while alice's long question keeps a turn running in acme."""
    held = asyncio.Event()
    question = "please summarize the incident report of last night, with its timeline " * 3
    anthropic_api.script = [text("Summary.", hold=held)]
    telegram_api.push_message(question, user=int(ALICE["telegram_user_id"]))
    await until(lambda: len(anthropic_api.requests) == 1)
    await page.set_viewport_size(PHONE)
    await console.log_in(GLOBAL_TOKEN)
    yield console
    held.set()


async def test_the_login_page_fits_a_phone(console: Console, page: Page) -> None:
    await page.set_viewport_size(PHONE)
    await console.open("/login")
    await fits(page)


@pytest.mark.parametrize("path", ["/", "/w/acme/", "/w/globex/", "/w/acme/config"])
async def test_the_page_fits_a_phone(phone: Console, page: Page, path: str) -> None:
    await phone.open(path)
    await fits(page)
