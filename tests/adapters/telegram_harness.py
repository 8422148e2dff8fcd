"""Starting the real App with a Telegram workspace against the fake Bot API."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from adapters.app import App
from config.loading import parse
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram

CONFIG = """
[server]
port = 0

[storage]
path = "{db}"

[provider]
kind = "anthropic"
model = "claude-test-model"
api_key = "test-key"
base_url = "{anthropic}"

[[workspaces]]
id = "acme"
default_agent = "assistant"

  [workspaces.telegram]
  bot_token = "{token}"
  api_base_url = "{telegram}"
  chats = [-100]
  {telegram_extra}

  [[workspaces.operators]]
  id = "alice"
  primary = true
  telegram_user_id = 1001
  notify_via = "telegram"

  [[workspaces.agents]]
  id = "assistant"
  tools = {tools}
{extra}
"""


async def start_app(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram: FakeTelegram,
    *,
    tools_: list[str] | None = None,
    extra: str = "",
    telegram_extra: str = "",
    public_url: str = "",
) -> App:
    text_ = CONFIG.format(
        db=db_path,
        anthropic=anthropic_api.url,
        token=telegram.token,
        telegram=telegram.base_url,
        tools=str(tools_ or ["notify_operator"]).replace("'", '"'),
        extra=extra,
        telegram_extra=telegram_extra,
    )
    if public_url:
        text_ = text_.replace("port = 0", f'port = 0\npublic_url = "{public_url}"', 1)
    app = App(
        parse(text_, db_path.parent / "switchboard.toml", os.environ),
        stdin=io.StringIO(),
        stdout=io.StringIO(),
    )
    await app.start()
    return app


def replies(telegram: FakeTelegram, chat: int) -> list[dict[str, Any]]:
    return [m for m in telegram.sent() if m["chat_id"] == chat and "reply_markup" not in m]
