"""The health of MCP servers and platform connections in words (issue 43): an MCP server that
fails to start, and a Telegram bot whose token is refused, said in chat's `/status` and in
`switchboard status` (run as a person runs it, beside the running process) and the console's
workspace overview (over real HTTP): which one, that it failed and why, and how to fix it.
Through the real App and the fakes."""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path

from bridge.store.health import HealthStore
from tests.adapters.cli_process import switchboard
from tests.adapters.telegram_harness import start_app
from tests.admin.harness import ACME_TOKEN, AdminClient, start_console
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

ALICE = 1001
MISSING = {"name": "files", "command": "/nonexistent/files-mcp"}
NOT_FOUND = (
    "MCP server files failed to start: its command /nonexistent/files-mcp was not found. "
    "To fix: install it, or correct the command of MCP server files of workspace acme in the "
    "config (a full path, or one on PATH). It is tried again by itself."
)


async def test_status_in_chat_says_which_mcp_server_failed_why_and_the_fix(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.responder = lambda body: text("ok")
    app = await start_app(
        db_path, anthropic_api, telegram_api, acme_extra={"mcp_servers": [MISSING]}
    )
    try:
        before = len(telegram_api.chat(ALICE))
        telegram_api.push_message("/status", user=ALICE)
        await until(lambda: len(telegram_api.chat(ALICE)) > before, wait_s=20)
        said = telegram_api.chat(ALICE)[-1]
        assert NOT_FOUND in said, said
        assert "Working: Telegram (polling)." in said, said
    finally:
        await app.stop()


async def test_switchboard_status_says_the_token_is_refused_and_the_mcp_server_failed(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    telegram_api.fail("getUpdates", 401, "Unauthorized", times=10_000)
    app = await start_app(
        db_path, anthropic_api, telegram_api, acme_extra={"mcp_servers": [MISSING]}
    )
    try:
        kept = HealthStore(app.runtime.store)

        async def refused() -> bool:
            return any("refuses the bot's token" in h.words for h in await kept.of("acme"))

        for _ in range(100):
            if await refused():
                break
            await asyncio.sleep(0.2)
        printed = await asyncio.to_thread(
            switchboard, "status", "--config", db_path.parent / "switchboard.toml"
        )
        out = printed.stdout
        assert printed.returncode == 0, printed.stderr
        assert "Connections and MCP servers (as the running process found them" in out, out
        assert (
            "    - Telegram (polling) is down: Telegram refuses the bot's token (getUpdates: "
            "Unauthorized). To fix: put a valid `bot_token` in workspace acme's [telegram] "
            "section, then `switchboard reload`." in out
        ) or (
            "    - Telegram (polling) is failing: Telegram refuses the bot's token (getUpdates: "
            "Unauthorized). To fix: put a valid `bot_token` in workspace acme's [telegram] "
            "section, then `switchboard reload`." in out
        ), out
        assert "    - MCP server files failed to start: its command `/nonexistent/files-mcp`" in out
    finally:
        await app.stop()


async def test_the_console_overview_says_which_mcp_server_failed_and_the_fix(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram, slack_api: FakeSlack
) -> None:
    app = await start_console(
        db_path, anthropic_api, telegram_api, slack_api, acme_extra={"mcp_servers": [MISSING]}
    )
    try:
        async with AdminClient(app) as client:
            await client.login(ACME_TOKEN)
            status, page = await client.get("/admin/w/acme/")
        assert status == 200
        items = dict(re.findall(r'<li data-health="([^"]+)" data-ok="[a-z]+">([^<]+)</li>', page))
        assert html.unescape(items["mcp:files"]).startswith(
            "MCP server files failed to start: its command `/nonexistent/files-mcp` was not "
            "found. To fix: install it, or correct the `command` of MCP server `files`"
        ), items
        assert html.unescape(items["platform:telegram:acme"]) == "Telegram (polling): connected."
    finally:
        await app.stop()
