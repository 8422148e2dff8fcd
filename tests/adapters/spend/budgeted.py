"""The App with one Telegram workspace under budgets, its agent able to `sleep`: the setup the
budget tests share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapters.server.app import App
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology


async def start_budgeted(
    topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    *,
    budgets: list[dict[str, Any]],
    operators: list[dict[str, Any]],
) -> App:
    """Workspace `acme` in Europe/Berlin with these budgets and operators, on `topology`."""
    extra = {"operators": operators, "budgets": budgets, "timezone": "Europe/Berlin"}
    extra["memory"] = {"enabled": False}  # the size of call the limits here were set for
    return await start_app(
        db_path,
        anthropic_api,
        telegram_api,
        agent_tools=("sleep",),
        acme_extra=extra,
        topology=topology,
    )
