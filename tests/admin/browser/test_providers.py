"""The Providers tab in a real browser, scripts off: acme's admin opens it from the
workspace's tabs after alice's session fell back (its first provider rate limited), and reads
the chain without a line of JavaScript: the first cooling until a time in the workspace's
timezone, the session on the fallback. The page fits a phone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser, expect

from adapters.server.app import App
from tests.adapters.fallback_scene import (
    ADMIN_TOKEN,
    BACKUP,
    PRIMARY,
    TIMEZONE,
    Scene,
    backup_api,
    fall_back,
    start_scene,
)
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import PHONE, Console
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology, topology_started

pytestmark = LOOP


@pytest_asyncio.fixture(loop_scope="session", params=["inline"])
async def console_topology(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Topology]:
    """One topology: tests/admin/test_providers_page.py reads the page on each."""
    async for started in topology_started(request, tmp_path):
        yield started


@pytest_asyncio.fixture(loop_scope="session")
async def scene(
    console_topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[Scene]:
    backup = backup_api()
    server = TestServer(backup.app(), host="127.0.0.1")
    await server.start_server()
    backup.url = str(server.make_url("/v1"))
    try:
        yield await start_scene(console_topology, anthropic_api, telegram_api, backup=backup)
        await console_topology.stop()  # while the fakes still answer
    finally:
        await server.close()


async def test_the_chain_reads_without_scripts_on_a_phone(scene: Scene, browser: Browser) -> None:
    await fall_back(scene)
    app: App = scene.app
    context = await browser.new_context(java_script_enabled=False)
    try:
        page = await context.new_page()
        await page.set_viewport_size(PHONE)
        console = Console(page, app)
        await console.log_in(ADMIN_TOKEN)
        await console.open("/w/acme/")
        await page.locator("nav.sub").get_by_role("link", name="Providers").click()
        await console.at("/w/acme/providers")

        first = page.locator(f'tr[data-candidate="{PRIMARY}"]')
        await expect(first.locator('[data-field="state"]')).to_have_text("cooling (rate limited)")
        await expect(first.locator('[data-field="until"]')).to_contain_text(TIMEZONE)
        await expect(first.locator('[data-field="failure"]')).to_contain_text("429")
        backup = page.locator(f'tr[data-candidate="{BACKUP}"]')
        await expect(backup.locator('[data-field="sessions"]')).to_have_text("1")
        sideways = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        assert await page.evaluate(sideways) <= 0, "the page fits a phone"
    finally:
        await context.close()
