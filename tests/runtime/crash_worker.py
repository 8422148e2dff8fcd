"""Run by test_crash_recovery in its own process, which the test then SIGKILLs."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from runtime.messages import Priority
from tests.fakes.anthropic_api import FakeAnthropic
from tests.runtime.helpers import counting_tool, open_runtime, operator


async def main(db: str, url: str, counter: str) -> None:
    fake = FakeAnthropic()
    fake.url = url
    where = db if "://" in db else Path(db)  # a PostgreSQL URL, or a SQLite file
    rt = await open_runtime(where, fake, command_tools=[counting_tool("count", Path(counter))])
    sid = await rt.create_session("assistant", session_id="ses_crash")
    await rt.submit(sid, operator("A: count once"))
    await rt.submit(sid, operator("B: later", priority=Priority.NORMAL))
    print("submitted", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
