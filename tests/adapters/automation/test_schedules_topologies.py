"""A schedule on every topology: on two replicas sharing PostgreSQL only the active one keeps
the clock, so each slot runs once (the standby, which has the same config, never fires)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

SLOT = re.compile(r'Scheduled run of \\"tick\\" for ([\d-]+ [\d:]+)')


async def test_each_slot_runs_once_whatever_serves_it(
    topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    slots: list[str] = []

    def answer(body: dict[str, Any]) -> Reply:
        found = SLOT.search(json.dumps(body["messages"][-1]))
        slots.append(found.group(1) if found else "?")
        return text("checked")

    anthropic_api.responder = answer
    tick = {
        "id": "tick",
        "agent": "assistant",
        "every": "1s",
        "prompt": "Tick.",
        "deliver": "silent",
    }
    await start_app(
        topology.folder / "unused.db",
        anthropic_api,
        telegram_api,
        acme_extra={"schedules": [tick]},
        topology=topology,
        server={"schedule_min_every": "1s"},  # every second, under the default floor
    )
    await until(lambda: len(slots) >= 4, 30)
    await asyncio.sleep(1.5)  # a second clock would have fired the same slots by now
    assert "?" not in slots
    assert len(slots) == len(set(slots)), f"a slot ran twice: {slots}"
