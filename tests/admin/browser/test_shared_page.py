"""The worker's page is reused from test to test (`conftest.SharedPage`): what a test gets is
as a new page would be, whatever the test before it left; after a failure it is a new page."""

from __future__ import annotations

from playwright.async_api import Browser

from tests.admin.browser.chromium import LOOP
from tests.admin.browser.conftest import SharedPage
from tests.admin.browser.walk import PHONE

pytestmark = LOOP

# where the mouse is on the page, once it moves
TRACK = "() => { document.onmousemove = (e) => { window.mouseAt = [e.clientX, e.clientY]; }; }"


async def test_a_page_is_lent_as_a_new_one_would_be(browser: Browser) -> None:
    shared = SharedPage(browser)
    try:
        page = await shared.lend()
        new = page.viewport_size
        await page.goto("data:text/html,<p>the test before's page</p>")
        await page.context.add_cookies([{"name": "s", "value": "v", "url": "http://127.0.0.1/"}])
        await page.set_viewport_size(PHONE)
        await page.mouse.move(200, 300)
        await shared.take_back(failed=False)

        await page.evaluate(TRACK)
        again = await shared.lend()
        assert again is page, "the same page, lent again"
        assert again.url == "about:blank", "the test before's page is gone"
        assert await again.context.cookies() == [], "no login left"
        assert again.viewport_size == new
        assert await again.evaluate("window.mouseAt") == [0, 0], "the mouse where a new page's is"

        await shared.take_back(failed=True)
        assert (await shared.lend()) is not page, "after a failure, a new page"
    finally:
        await shared.close()
