"""Two workspaces on one bridge, for the admin console's reads and actions: `acme` (Alice,
primary, and Bob) and `beta` (Carol), each with a Telegram bot; a recording transport."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from pathlib import Path

from adapters.telegram.platform import TELEGRAM
from bridge.admin.live import live_sessions
from bridge.admin.records import SessionRow
from bridge.service import Bridge
from bridge.types import InboundChat, Route
from config import SwitchboardConfig, load
from tests.backends import folder_of
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic

ALICE, BOB, CAROL = 1001, 1002, 2001


def two_workspaces(
    db: Path | str, fake: FakeAnthropic, *, beta_mode: str | None = None
) -> SwitchboardConfig:
    alice = {"id": "alice", "primary": True, "telegram_user_id": ALICE, "notify_via": "telegram"}
    bob = {"id": "bob", "telegram_user_id": BOB}
    carol = {"id": "carol", "primary": True, "telegram_user_id": CAROL}
    acme = workspace("acme", [alice, bob], telegram={"bot_token": "123:acme-test-token"})
    beta = workspace(
        "beta", [carol], telegram={"bot_token": "456:beta-test-token"}, queue_mode=beta_mode
    )
    path = folder_of(db) / "switchboard.toml"
    return load(
        write_config(path, db=db, provider=anthropic(fake.url), port=None, workspaces=[acme, beta])
    )


def dm_in(workspace_id: str, user: int, text: str, update_id: int) -> InboundChat:
    return InboundChat(
        route=Route(
            platform=TELEGRAM.name,
            workspace_id=workspace_id,
            conversation_id=str(user),
            reply_to=str(update_id),
        ),
        sender_id=str(user),
        dedupe_keys=(f"update:{workspace_id}:{update_id}",),
        text=text,
        is_direct=True,
        message_ref=str(update_id),
    )


async def rows_until(
    feed: AsyncIterator[list[SessionRow]], done: Callable[[list[SessionRow]], bool]
) -> list[SessionRow]:
    """The live feed's rows, read until `done` holds for them."""
    async for rows in feed:
        if done(rows):
            return rows
    raise AssertionError("the live feed ended")


def feed(
    bridge: Bridge, config: SwitchboardConfig, workspace_id: str
) -> AsyncGenerator[list[SessionRow], None]:
    return live_sessions(bridge, config, workspace_id, tick_s=0.05)
