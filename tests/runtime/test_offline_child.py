"""The offline model's demo of a child agent reads as a person would write it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.providers.offline import OfflineProvider
from tests.runtime.helpers import operator


async def test_the_parent_tells_the_childs_report_without_switchboards_framing(
    db_path: Path, cleanup: list[object]
) -> None:
    agent = AgentSpec("assistant", tools=("spawn_agent",))
    rt = await Runtime.open(db_path, provider=OfflineProvider(), agents=[agent])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("spawn check the disk"))
    for _ in range(200):
        runs = await rt.store.runs(session_id=sid)
        if len(runs) == 2 and runs[-1].final_text:
            break
        await asyncio.sleep(0.05)
    assert runs[-1].final_text == "My child agent reported back: You said: check the disk"
