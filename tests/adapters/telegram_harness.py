"""Starting the real App with a Telegram workspace against the fake Bot API."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adapters.server.app import App
from bridge.events import DeliveryAccepted
from bridge.types import DeliveryKind
from config import load
from runtime.tools.command import CommandToolSpec
from tests.config_file import Table, anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology


async def delivery_recorded(app: App, kind: DeliveryKind | None = None) -> None:
    """Until a delivery (of `kind`) is recorded with its message id, so that a reply to it is
    matched: a person replies seconds after it shows, a test within milliseconds (on a loaded
    machine the record can commit after the message shows)."""

    async def scan() -> None:
        async for event in app.runtime.events(after_seq=0):
            if isinstance(event.data, DeliveryAccepted) and kind in (None, event.data.kind):
                return

    await asyncio.wait_for(scan(), 20)


ALICE = {"id": "alice", "primary": True, "telegram_user_id": 1001, "notify_via": "telegram"}


async def start_app(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram: FakeTelegram,
    *,
    agent_tools: Sequence[str] = ("notify_operator",),
    tools: Sequence[CommandToolSpec] = (),
    webhook_secret: str | None = None,
    public_url: str | None = None,
    more_workspaces: Sequence[Table] = (),
    chats: Sequence[int] = (-100,),
    acme_extra: Table | None = None,
    topology: Topology | None = None,
    server: Table | None = None,
    provider: Table | None = None,
    providers: Table | None = None,
) -> App:
    """Workspace `acme`: its bot polls, or with `webhook_secret` takes webhooks; operator
    alice (1001) and the group -100 allowed (or `chats`); `acme_extra`: more keys of acme's
    table (agents, bindings, respond_to); `server`: more keys of `[server]`; `provider`: more
    keys of `[provider]`, `providers`: its `[providers.<name>]` entries. With `topology`,
    started there (its database, not `db_path`): the App a client talks to."""
    bot = {
        "bot_token": telegram.token,
        "api_base_url": telegram.base_url,
        "chats": list(chats),
        "mode": "webhook" if webhook_secret else None,
        "webhook_secret": webhook_secret,
    }
    acme = workspace("acme", [ALICE], telegram=bot, agent_tools=agent_tools, tools=tools)
    acme = {**acme, **(acme_extra or {})}
    path = write_config(
        (topology.folder if topology else db_path.parent) / "switchboard.toml",
        db=topology.db if topology else db_path,
        provider={**anthropic(anthropic_api.url), **(provider or {})},
        providers=providers,
        public_url=public_url,
        workspaces=[acme, *more_workspaces],
        server=server,
    )
    if topology is not None:
        return await topology.start(path)
    app = App(load(path), stdin=io.StringIO(), stdout=io.StringIO(), path=path)
    await app.start()
    return app


def replies(telegram: FakeTelegram, chat: int) -> list[dict[str, Any]]:
    return [m for m in telegram.sent() if m["chat_id"] == chat and "reply_markup" not in m]
