"""The real App with the admin console on, two workspaces and three admins, and an admin's
browser-less client: a cookie jar and the CSRF token of the last page it loaded.

Workspace `acme` is on Telegram (operator alice, 1001; its admin `lead`), `globex` on Slack
team T2 (operator bob; its admin `boss`); the global admin sees both."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp

from adapters.server.app import App
from config import load
from tests.adapters.slack_harness import globex_workspace
from tests.adapters.telegram_harness import ALICE
from tests.config_file import Table, anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology

GLOBAL_TOKEN = "global-admin-token-for-tests-0001"
ACME_TOKEN = "acme-lead-token-for-tests-0002"
GLOBEX_TOKEN = "globex-boss-token-for-tests-0003"
ACME_ADMIN = {"id": "lead", "token": ACME_TOKEN}
GLOBEX_ADMIN = {"id": "boss", "token": GLOBEX_TOKEN}


def config_path(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram: FakeTelegram,
    slack: FakeSlack,
    *,
    admin: Table | None = None,
    acme_extra: Table | None = None,
    globex_extra: Table | None = None,
    agent_tools: tuple[str, ...] = ("notify_operator",),
    topology: Topology | None = None,
    server: Table | None = None,
) -> Path:
    """`server`: more keys of `[server]` (a lower schedule_min_every)."""
    bot = {"bot_token": telegram.token, "api_base_url": telegram.base_url, "chats": [-100]}
    acme = workspace("acme", [ALICE], telegram=bot, agent_tools=agent_tools)
    acme = {**acme, "admins": [ACME_ADMIN], **(acme_extra or {})}
    globex = {**globex_workspace(slack), "admins": [GLOBEX_ADMIN], **(globex_extra or {})}
    return write_config(
        (topology.folder if topology else db_path.parent) / "switchboard.toml",
        db=topology.db if topology else db_path,
        provider=anthropic(anthropic_api.url),
        admin={"token": GLOBAL_TOKEN} if admin is None else admin,
        workspaces=[acme, globex],
        server=server,
    )


async def start_console(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram: FakeTelegram,
    slack: FakeSlack,
    **kwargs: Any,
) -> App:
    path = config_path(db_path, anthropic_api, telegram, slack, **kwargs)
    if (topology := kwargs.get("topology")) is not None:
        return await topology.start(path)
    app = App(load(path), stdin=io.StringIO(), stdout=io.StringIO(), path=path)
    await app.start()
    return app


_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


class AdminClient:
    """What an admin's browser does, over real HTTP: follows redirects, keeps the cookie,
    sends back the CSRF token of the page it last loaded."""

    def __init__(self, app: App) -> None:
        self.base = f"http://127.0.0.1:{app.port}"
        # unsafe: keep cookies from an IP-address host (127.0.0.1), as a browser does.
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.csrf = ""

    async def __aenter__(self) -> AdminClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.close()

    async def login(self, token: str) -> tuple[int, str]:
        return await self.post("/admin/login", {"token": token}, csrf=False)

    async def get(self, path: str, **kwargs: Any) -> tuple[int, str]:
        async with self.http.get(self.base + path, **kwargs) as response:
            return await self._read(response)

    async def post(
        self, path: str, data: Mapping[str, str] | None = None, *, csrf: bool = True
    ) -> tuple[int, str]:
        form = {**({"csrf": self.csrf} if csrf else {}), **(data or {})}
        async with self.http.post(self.base + path, data=form) as response:
            return await self._read(response)

    async def _read(self, response: aiohttp.ClientResponse) -> tuple[int, str]:
        text = await response.text()
        if found := _CSRF.search(text):
            self.csrf = found.group(1)
        return response.status, text
