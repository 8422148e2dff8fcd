"""Logging in to the console, in a real browser: a wrong token is refused with a message, the
right one lands on the workspaces this admin may see."""

from __future__ import annotations

from playwright.async_api import Page, expect

from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import Console
from tests.admin.harness import ACME_TOKEN, GLOBAL_TOKEN

pytestmark = LOOP


async def test_a_wrong_token_is_refused_and_the_right_one_lands_on_every_workspace(
    console: Console, page: Page
) -> None:
    await console.open("/")
    await console.at("/login")  # no session yet: sent to log in
    await console.log_in("not-the-admin-token-at-all")
    await expect(page.get_by_role("alert")).to_contain_text("not an admin")
    await console.at("/login")
    assert await console.workspaces_listed() == []
    await console.log_in(GLOBAL_TOKEN)
    await console.at("/")
    await expect(page.locator("a.workspace")).to_have_text(["acme", "globex"])
    await expect(page.locator("[data-admin]")).to_have_text("admin")
    await page.get_by_role("link", name="globex").first.click()
    await console.at("/w/globex/")
    await page.get_by_role("button", name="Log out").click()
    await console.at("/login")
    await console.open("/w/globex/")
    await console.at("/login")  # logged out: the session is gone


async def test_a_workspace_admin_sees_only_their_workspace(console: Console, page: Page) -> None:
    await console.log_in(ACME_TOKEN)
    await console.at("/")
    await expect(page.locator("a.workspace")).to_have_text(["acme"])
    await expect(page.locator("[data-admin]")).to_have_text("acme/lead")
    refused = await console.open("/w/globex/")
    assert refused is not None and refused.status == 403
    await expect(page.locator("body")).to_contain_text("may not see workspace globex")
    await console.open("/w/acme/")
    await expect(page.locator("h1")).to_have_text("acme")
