"""The global admin's Reload, in a real browser: the file edited on disk, "Reload from file"
pressed, and the page says what changed, key by key."""

from __future__ import annotations

from playwright.async_api import Page, expect

from adapters.server.app import App
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import Console
from tests.admin.harness import GLOBAL_TOKEN

pytestmark = LOOP

PULSE = """
[[workspaces.schedules]]
id = "pulse"
agent = "assistant"
every = "1h"
prompt = "Check in."

"""


async def test_the_reload_page_lists_what_changed_key_by_key(
    app: App, console: Console, page: Page
) -> None:
    await console.log_in(GLOBAL_TOKEN)
    await console.open("/w/acme/config")
    assert app.path is not None
    text = app.path.read_text()
    acme = text.index('id = "acme"')
    after = text.index("[[workspaces]]", acme)  # acme's tables end where the next begins
    app.path.write_text(text[:after] + PULSE + text[after:])
    await page.get_by_role("button", name="Reload from file").click()
    status = page.get_by_role("status")
    await expect(status).to_contain_text("workspaces changed: acme")
    await expect(status).to_contain_text("acme: schedules.pulse added")
