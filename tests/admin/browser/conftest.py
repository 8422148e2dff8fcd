"""The browser tests' fixtures: Debian's Chromium driven by Playwright, one browser per test
worker, one page per worker that each test gets as a new page would be (`SharedPage`), and on
a failure a screenshot and the page's HTML in the test's tmp dir, their paths printed with
the failure.

The browser outlives a test, so it lives in the worker's session event loop; every test here
runs in that loop too (`pytestmark = LOOP` in each module, see chromium.py), and so must
everything it talks to: the fakes below are this directory's own, started in that loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer
from playwright.async_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Error,
    Page,
    ViewportSize,
    async_playwright,
    expect,
)

from adapters.server.app import App
from tests.admin.browser.chromium import CHROMIUM, FLAGS, missing_browser
from tests.admin.browser.walk import GATED, Console, gated_tool
from tests.admin.harness import start_console
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import CONSOLE, Topology, topology_started

WAIT_MS = 10_000  # Playwright's waits: a page slow under a loaded machine is not a failure
expect.set_options(timeout=WAIT_MS)
_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the test, for the page fixture to see a failure."""
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Browser]:
    if why := missing_browser():
        pytest.skip(why)
    async with async_playwright() as playwright:
        # launch() gives the browser a fresh profile (user data dir) of its own
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        await browser.close()


class SharedPage:
    """The worker's page, lent to one test at a time. A new context and page cost Chromium a
    renderer process and its warm-up, most of a second of CPU (half of a short test's), so a
    test that passed hands its page on: left for a blank one (its scripts and live feeds
    end), then, before the next test, its cookies (the login) cleared and its viewport and
    mouse as a new page's. What else a page keeps is per origin (storage, cache): each test's
    console has a port of its own, and its pages are not cached (no-store). After a failure
    the next test gets a new context and page."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.context: BrowserContext | None = None
        self.page: Page | None = None
        self.viewport: ViewportSize | None = None  # a new page's

    async def lend(self) -> Page:
        if self.context is None or self.page is None or self.page.is_closed():
            await self.close()
            self.context = await self.browser.new_context()
            self.context.set_default_timeout(WAIT_MS)
            self.page = await self.context.new_page()
            self.viewport = self.page.viewport_size
            return self.page
        await self.context.clear_cookies()
        if self.viewport is not None and self.page.viewport_size != self.viewport:
            await self.page.set_viewport_size(self.viewport)
        await self.page.mouse.move(0, 0)
        return self.page

    async def take_back(self, *, failed: bool) -> None:
        if failed or self.page is None or self.page.is_closed():
            await self.close()
        else:
            await self.page.goto("about:blank")

    async def close(self) -> None:
        if self.context is not None:
            await self.context.close()
        self.context = self.page = None


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def shared_page(browser: Browser) -> AsyncIterator[SharedPage]:
    shared = SharedPage(browser)
    yield shared
    await shared.close()


@pytest_asyncio.fixture(loop_scope="session")
async def page(
    shared_page: SharedPage, request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Page]:
    page = await shared_page.lend()
    broken: list[str] = []  # what broke the pages' scripts: a console that stops updating

    def uncaught(error: Error) -> None:
        broken.append(f"uncaught: {error}")

    def refused(message: ConsoleMessage) -> None:
        if _refused_by_csp(message):
            broken.append(message.text)

    page.on("pageerror", uncaught)
    page.on("console", refused)
    yield page
    reports = request.node.stash.get(_REPORTS, {})
    failed = any(r.failed for r in reports.values())
    if failed:
        await _keep(page, tmp_path)
    await shared_page.take_back(failed=failed)
    page.remove_listener("pageerror", uncaught)
    page.remove_listener("console", refused)
    assert broken == [], "the console's pages must run their scripts without an error"


def _refused_by_csp(message: ConsoleMessage) -> bool:
    return message.type == "error" and "Content Security Policy" in message.text


async def _keep(page: Page, where: Path) -> None:
    """The page as the failure left it, for a person to look at: printed with the failure."""
    shot, html = where / "failure.png", where / "failure.html"
    try:
        await page.screenshot(path=shot, full_page=True)
        html.write_text(await page.content(), encoding="utf-8")
    except Exception as e:  # a test that broke the page still reports its own failure
        print(f"no screenshot of the page at the failure ({page.url}): {e}")
        return
    print(f"the page at the failure ({page.url}): screenshot {shot}, HTML {html}")


@asynccontextmanager
async def _serving(app: web.Application) -> AsyncIterator[str]:
    """Serve `app` on a free loopback port: its base URL."""
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield str(server.make_url("")).rstrip("/")
    finally:
        await server.close()


@pytest_asyncio.fixture(loop_scope="session")
async def anthropic_api() -> AsyncIterator[FakeAnthropic]:
    fake = FakeAnthropic()
    async with _serving(fake.app()) as fake.url:
        yield fake


@pytest_asyncio.fixture(loop_scope="session")
async def telegram_api() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    async with _serving(fake.app()) as fake.url:
        yield fake


@pytest_asyncio.fixture(loop_scope="session")
async def slack_api() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    fake.add_team("T1")
    fake.add_team("T2")
    async with _serving(fake.app()) as fake.url:
        yield fake


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    """Create this file to let acme's gated tool finish."""
    return tmp_path / "gate"


@pytest_asyncio.fixture(loop_scope="session", params=CONSOLE)
async def console_topology(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Topology]:
    """Each topology that serves the console (`tests/topology.py`), in the browser's loop."""
    async for started in topology_started(request, tmp_path):
        yield started


@pytest_asyncio.fixture(loop_scope="session")
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
    gate: Path,
) -> AsyncIterator[App]:
    yield await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        agent_tools=("notify_operator", GATED),
        acme_extra={"tools": [gated_tool(gate)]},
        topology=console_topology,
    )
    # A gated tool a test left running ends now, rather than after the stop's grace for it
    # (20 s each time); then the stop, while the fakes still answer.
    await asyncio.to_thread(gate.touch)
    await console_topology.stop()


@pytest.fixture
def console(page: Page, app: App) -> Console:
    return Console(page, app)
