"""The console on a phone-sized screen (390 x 844): every page fits its width, so nothing
needs a sideways scroll."""

from __future__ import annotations

from playwright.async_api import Page

from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import PHONE, Console
from tests.admin.harness import GLOBAL_TOKEN

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


async def test_every_page_fits_a_phone_screen(console: Console, page: Page) -> None:
    await page.set_viewport_size(PHONE)
    await console.open("/login")
    await fits(page)
    await console.log_in(GLOBAL_TOKEN)
    await console.at("/")
    await fits(page)
    for path in ("/w/acme/", "/w/globex/"):
        await console.open(path)
        await fits(page)
