"""An admin at the console in a real browser: the App the harness starts (acme on Telegram,
globex on Slack team T2) with a command tool acme's agent can be held in, and the steps every
walk takes (open a page, log in)."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import Page, Response, expect

from adapters.server.app import App
from tests.config_file import Table

GATED = "wait_for_gate"  # acme's command tool: runs until its gate file exists
GROUP = -100  # acme's Telegram group
PHONE = {"width": 390, "height": 844}


def gated_tool(gate: Path) -> Table:
    """`[[workspaces.tools]]` entry of a tool that runs until `gate` exists."""
    script = f'while [ ! -e "{gate}" ]; do sleep 0.05; done; echo released'
    return {
        "name": GATED,
        "description": "waits for a gate file",
        "command": ["bash", "-c", script],
        "timeout_s": 60,
    }


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
