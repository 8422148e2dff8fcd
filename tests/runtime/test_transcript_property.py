"""Property: whatever the interleaving of rounds, tool calls, interjections and stops,
every request the (strict) fake API receives is valid, and no message is left behind."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from pathlib import Path
from typing import Any

from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.errors import StaleRunError, UnknownRunError
from runtime.messages import Priority, QueueStatus
from runtime.records import RunStatus
from runtime.results import RuntimeSettings
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text
from tests.runtime.helpers import open_runtime, operator

TERMINAL = {QueueStatus.PROCESSED, QueueStatus.INTERJECTED, QueueStatus.ABORTED}

round_st = st.one_of(
    st.builds(lambda t: text(t), st.sampled_from(["done", "  ", "", "answer\n"])),
    st.builds(
        lambda n, say: Reply(
            blocks=([{"type": "text", "text": say}] if say else [])
            + [{"type": "tool_use", "name": "sleep", "input": {"seconds": 0}}] * n
        ),
        st.integers(1, 3),
        st.sampled_from(["", " ", "working"]),
    ),
)
action_st = st.sampled_from(["interject", "queue", "stop", "nothing"])


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rounds=st.lists(round_st, min_size=1, max_size=8),
    actions=st.lists(st.lists(action_st, max_size=2), max_size=8),
)
def test_every_request_is_valid(rounds: list[Reply], actions: list[list[str]]) -> None:
    asyncio.run(_scenario(rounds, actions))


async def _scenario(rounds: list[Reply], actions: list[list[str]]) -> None:
    fake = FakeAnthropic()
    runner = web.AppRunner(fake.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    fake.url = f"http://127.0.0.1:{port}"
    pending: list[asyncio.Task[Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        rt = await open_runtime(
            Path(tmp) / "p.db",
            fake,
            settings=RuntimeSettings(max_rounds=12, max_repeated_calls=100),
        )
        sid = await rt.create_session("assistant")
        script = list(rounds)
        plan = list(actions)

        async def act(what: str) -> None:
            if what == "interject":
                await rt.submit(sid, operator("operator says hi"))
            elif what == "queue":
                await rt.submit(sid, operator("for later", priority=Priority.NORMAL))
            elif what == "stop" and (run_id := rt.status(sid).run_id):
                with contextlib.suppress(StaleRunError, UnknownRunError):
                    await rt.stop(sid, run_id)

        def respond(body: dict[str, Any]) -> Reply:
            for what in plan.pop(0) if plan else []:
                pending.append(asyncio.get_running_loop().create_task(act(what)))
            return script.pop(0) if script else text("final")

        fake.responder = respond
        await rt.submit(sid, operator("begin"))
        while True:
            await rt.wait_idle()
            live = [t for t in pending if not t.done()]
            if not live:
                await asyncio.sleep(0)
                if (
                    not [t for t in pending if not t.done()]
                    and rt.status(sid).state == "idle"
                    and rt.status(sid).queued == 0
                ):
                    break
                continue
            await asyncio.gather(*live)
        for task in pending:
            task.result()
        messages = await rt.store.messages(session_id=sid)
        runs = await rt.store.runs(session_id=sid)
        await rt.close()
    await runner.cleanup()
    assert fake.refused == [], fake.refused[0][1] if fake.refused else ""
    assert {m.status for m in messages} <= TERMINAL, [m.status for m in messages]
    failed = [r.error for r in runs if r.status is RunStatus.FAILED]
    assert failed == [], "the runtime never builds a transcript its own lowering refuses"
