"""A key the first provider refused (401) is not tried again until the config is reloaded:
the agent's turns go to its fallback meanwhile, and after a reload to the first again. A
session left (/new) is forgotten by the chain."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from pytest_aiohttp import AiohttpServer

from runtime.agents import AgentSpec
from runtime.clock import SystemClock
from runtime.engine import Runtime
from runtime.errors import ProviderError
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.base import ProviderRequest, ProviderResponse, RetryNotice, TextSink
from runtime.providers.cooldowns import Candidate, CooldownPolicy, Cooldowns, State
from runtime.providers.fallback import Chain, FallbackPolicy
from tests.fakes.anthropic_api import FakeAnthropic, error, text
from tests.runtime.helpers import operator

Servers = Callable[..., Awaitable[AiohttpServer]]


async def _fake(aiohttp_server: Servers) -> FakeAnthropic:
    fake = FakeAnthropic()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


async def test_a_refused_key_is_tried_again_after_a_reload(
    aiohttp_server: Servers, db_path: Path, cleanup: list[object]
) -> None:
    first, second = await _fake(aiohttp_server), await _fake(aiohttp_server)
    first.script = [
        error(401, "authentication_error", "invalid x-api-key"),
        text("pong"),  # the probe at the turn's start, after the reload
        text("First again."),
    ]
    second.responder = lambda body: text("From the second.")
    told: list[str] = []
    health = Cooldowns(SystemClock(), on_disabled=lambda c, e: told.append(c.label))
    chain = Chain(
        [
            Candidate(
                n,
                "key",
                "claude-haiku-4-5",
                AnthropicProvider("claude-haiku-4-5", api_key="k", base_url=f.url, max_attempts=1),
            )
            for n, f in (("first", first), ("second", second))
        ],
        health,
    )
    # It keeps memory: /new's flush runs on the chain too, before the session is forgotten.
    agent = AgentSpec("assistant", "A test agent.", (), chain="assistant", memory="assistant")
    rt = await Runtime.open(
        db_path,
        provider=chain.candidates[1].provider,
        agents=[agent],
        chains={"assistant": chain},
    )
    cleanup.append(rt)
    sid = await rt.create_session("assistant")

    async def answer(words: str, session_id: str = sid) -> str:
        await rt.submit(session_id, operator(words))
        await rt.wait_idle()
        runs = await rt.store.runs(session_id=session_id)
        return runs[-1].final_text or ""

    assert await answer("One?") == "From the second."
    assert health.state(chain.candidates[0]) is State.DISABLED
    assert told == ["first:claude-haiku-4-5"], "the admin is told once"
    assert await answer("Two?") == "From the second.", "a refused key is not tried again"
    assert len(first.requests) == 1
    other = await rt.create_session("assistant")
    assert await answer("Elsewhere?", other) == "From the second."
    on_second = "second:claude-haiku-4-5"
    assert rt.models.snapshot()["assistant"].sessions == {sid: on_second, other: on_second}
    assert rt.leave(other), "/new there: its memory flushed"
    await rt.wait_idle()  # the flush went to the second too; then the session is forgotten
    assert rt.models.snapshot()["assistant"].sessions == {sid: on_second}
    rt.reconfigure([agent], [])
    assert await answer("Three?") == "First again.", "after a reload, the first is tried again"
    assert first.requests[1]["max_tokens"] == 1, "once a probe found it answering"


class Broken:
    """A first provider that is overloaded, and whose probe raises what no provider should."""

    model = "claude-haiku-4-5"

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        if request.max_tokens == 1:
            raise RuntimeError("a bug in a probe")
        raise ProviderError("overloaded", status=529)

    async def close(self) -> None:
        pass


async def test_a_probe_that_breaks_does_not_stop_the_turn(
    aiohttp_server: Servers, db_path: Path, cleanup: list[object]
) -> None:
    second = await _fake(aiohttp_server)
    second.responder = lambda body: text("From the second.")
    health = Cooldowns(SystemClock(), CooldownPolicy(open_s=0.01))
    chain = Chain(
        [
            Candidate("first", "key", "claude-haiku-4-5", Broken()),
            Candidate(
                "second",
                "key",
                "claude-haiku-4-5",
                AnthropicProvider(
                    "claude-haiku-4-5", api_key="k", base_url=second.url, max_attempts=1
                ),
            ),
        ],
        health,
        FallbackPolicy(probe_interval_s=0.01),
    )
    agent = AgentSpec("assistant", "You are a test agent.", (), chain="assistant")
    rt = await Runtime.open(
        db_path, provider=chain.candidates[1].provider, agents=[agent], chains={"assistant": chain}
    )
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    for words in ("One?", "Two?"):
        await asyncio.sleep(0.05)  # the first's circuit half-open: the turn's start probes it
        await rt.submit(sid, operator(words))
        await rt.wait_idle()
    runs = await rt.store.runs(session_id=sid)
    assert [r.final_text for r in runs] == ["From the second.", "From the second."]
