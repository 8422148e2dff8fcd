"""Property, on every provider: whatever the interleaving of rounds, tool calls, interjections
admitted at safe points and stops, every request the provider's (strict) fake receives is
valid, no run fails on a transcript its own lowering refuses, and no message is left behind.
Claude on Bedrock and on Vertex through the SDK's clients, an OpenAI-compatible server and
one taking nine-character ids; Anthropic's API is tests/runtime/test_transcript_property.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.errors import StaleRunError, UnknownRunError
from runtime.messages import Priority, QueueStatus
from runtime.records import RunStatus
from runtime.results import RuntimeSettings
from tests.runtime.helpers import operator
from tests.runtime.providers.every_provider import KINDS, Round, fake_of, provider_of

TERMINAL = {QueueStatus.PROCESSED, QueueStatus.INTERJECTED, QueueStatus.ABORTED}
round_st = st.one_of(
    st.builds(Round, st.sampled_from(["done", "  ", "", "answer\n"])),
    st.builds(
        lambda say, n: Round(say, ("sleep",) * n),
        st.sampled_from(["", " ", "working"]),
        st.integers(1, 3),
    ),
)
action_st = st.sampled_from(["interject", "queue", "stop", "nothing"])


@pytest.mark.parametrize("kind", KINDS)
def test_every_request_is_valid_on_each_provider(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        rounds=st.lists(round_st, min_size=1, max_size=8),
        actions=st.lists(st.lists(action_st, max_size=2), max_size=8),
    )
    def every(rounds: list[Round], actions: list[list[str]]) -> None:
        asyncio.run(_scenario(kind, fake_of(kind, monkeypatch), rounds, actions))

    every()


async def _scenario(
    kind: str, served: tuple[Any, Any], rounds: list[Round], actions: list[list[str]]
) -> None:
    fake, reply = served
    runner = web.AppRunner(fake.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}"
    pending: list[asyncio.Task[Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        agent = AgentSpec("assistant", "You are a test agent.", ("notify_operator", "sleep"))
        rt = await Runtime.open(
            Path(tmp) / "p.db",
            provider=provider_of(kind, url),
            agents=[agent],
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

        def respond(body: dict[str, Any]) -> Any:
            for what in plan.pop(0) if plan else []:
                pending.append(asyncio.get_running_loop().create_task(act(what)))
            return reply(script.pop(0) if script else Round("final"))

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
