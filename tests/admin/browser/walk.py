"""An admin at the console in a real browser: the App the harness starts (acme on Telegram,
globex on Slack team T2) with a command tool acme's agent can be held in, and the steps every
walk takes (open a page, log in)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Locator, Page, Response, expect

from adapters.server.app import App
from bridge.events import DeliveryFailed
from tests.config_file import Table

GATED = "wait_for_gate"  # acme's command tool: runs until its gate file exists
GROUP = -100  # acme's Telegram group
PHONE = {"width": 390, "height": 844}
# Telegram's answer when a group took the bot's right to post
NO_RIGHTS = "Bad Request: not enough rights to send text messages to the chat"


def gated_tool(gate: Path) -> Table:
    """`[[workspaces.tools]]` entry of a tool that runs until `gate` exists."""
    script = f'while [ ! -e "{gate}" ]; do sleep 0.05; done; echo released'
    return {
        "name": GATED,
        "description": "waits for a gate file",
        "command": ["bash", "-c", script],
        "timeout_s": 60,
    }


def answering(text: str) -> Callable[[dict[str, Any]], bool]:
    """A Telegram send of the answer `text` itself, not the live preview of it (which has
    the Stop button)."""
    return lambda params: text in params.get("text", "") and "reply_markup" not in params


class Console:
    """The console as the admin's browser sees it."""

    def __init__(self, page: Page, app: App) -> None:
        self.page = page
        self.base = f"http://127.0.0.1:{app.port}/admin"

    async def open(self, path: str = "/") -> Response | None:
        return await self.page.goto(self.base + path)

    async def log_in(self, token: str) -> None:
        """Submit the login form; the page is then the index, or the login page with why."""
        if not re.search(r"/admin/login$", self.page.url):
            await self.open("/login")
        await self.page.get_by_label("Admin token").fill(token)
        await self.page.get_by_role("button", name="Log in").click()
        await self.page.wait_for_load_state()

    async def workspaces_listed(self) -> list[str]:
        return await self.page.locator("a.workspace").all_inner_texts()

    async def at(self, path: str) -> None:
        await expect(self.page).to_have_url(self.base + path)

    def session_row(self) -> Locator:
        """The one session of a workspace's overview."""
        return self.page.locator("#sessions tr[data-session]")

    def step(self) -> Locator:
        """What the session does now, in words, on a workspace's overview (one session in
        it): "thinking (model call) for 2 s", "running tool `deploy` for 1 s", "idle"."""
        return self.session_row().locator('[data-field="doing"]')

    def delivery(self, text: str) -> Locator:
        """The row of the delivery that says `text`, on a workspace's deliveries page."""
        return self.page.locator("#deliveries tr[data-delivery]").filter(
            has=self.page.locator('[data-field="text"]', has_text=text)
        )


async def delivery_failed(app: App) -> DeliveryFailed:
    """The first delivery that failed (from the ledger's start)."""
    async with asyncio.timeout(10):
        async for event in app.runtime.events(after_seq=0):
            if isinstance(event.data, DeliveryFailed):
                return event.data
    raise AssertionError("the event feed closed")
