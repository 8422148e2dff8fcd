"""A bridge over a real runtime and SQLite file, with a Telegram-like recording transport."""

from __future__ import annotations

from pathlib import Path

from adapters.server.assembly import open_runtime
from adapters.telegram.platform import TELEGRAM
from bridge.service import Bridge
from bridge.types import InboundChat, Route
from config import SwitchboardConfig, load
from tests.backends import folder_of
from tests.bridge.fakes import RecordingTransport
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic


def config_for(db: Path | str, fake: FakeAnthropic) -> SwitchboardConfig:
    alice = {"id": "alice", "primary": True, "telegram_user_id": 1001, "notify_via": "telegram"}
    acme = workspace("acme", [alice], telegram={"bot_token": "123:test", "chats": [-100]})
    path = folder_of(db) / "switchboard.toml"
    return load(
        write_config(path, db=db, provider=anthropic(fake.url), port=None, workspaces=[acme])
    )


async def open_bridge(
    config: SwitchboardConfig, transport: RecordingTransport | None = None
) -> Bridge:
    runtime = await open_runtime(config)
    bridge = Bridge(config, runtime, progress_interval_s=60)
    if transport is not None:
        bridge.attach(transport)
    await bridge.start()
    return bridge


async def close_bridge(bridge: Bridge) -> None:
    await bridge.close()
    await bridge.runtime.close()


def dm(
    text: str | None, *, user: int = 1001, update_id: int = 1, chat: str | None = None
) -> InboundChat:
    """A Telegram message: a DM from `user`, or a group message when `chat` is given."""
    return InboundChat(
        route=Route(
            platform=TELEGRAM.name,
            workspace_id="acme",
            conversation_id=chat or str(user),
            reply_to=str(update_id),
        ),
        sender_id=str(user),
        dedupe_keys=(f"update:{update_id}",),
        text=text,
        is_direct=chat is None,
        message_ref=str(update_id),
        attachment_kind=None if text is not None else "sticker",
    )
