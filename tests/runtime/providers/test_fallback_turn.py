"""A turn whose first provider fails mid-turn, after a tool call: the second answers, from
the transcript the first began (its tool-call ids included), with no tool call repeated and
the switch recorded. The runtime here is given the chain's view of its one session; wiring a
chain per agent is the runtime's (issue 41)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from pytest_aiohttp import AiohttpServer

from runtime.agents import AgentSpec
from runtime.clock import SystemClock
from runtime.engine import Runtime
from runtime.events import EventType
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.base import ProviderRequest, ProviderResponse, RetryNotice, TextSink
from runtime.providers.cooldowns import Candidate, Cooldowns, State
from runtime.providers.fallback import Chain
from runtime.records import RunStatus
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.runtime.helpers import all_events, operator

Servers = Callable[..., Awaitable[AiohttpServer]]


class OneSession:
    """The turn's provider: the chain's view of whichever session the test made."""

    def __init__(self, chain: Chain) -> None:
        self.chain = chain
        self.session_id = ""

    @property
    def model(self) -> str:
        return self.chain.current(self.session_id).model

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        view = self.chain.for_session(self.session_id)
        return await view.complete(request, on_text, on_retry)

    async def close(self) -> None:
        for candidate in self.chain.candidates:
            await candidate.provider.close()


async def _fake(aiohttp_server: Servers) -> FakeAnthropic:
    fake = FakeAnthropic()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


async def test_the_second_provider_finishes_a_turn_the_first_failed_after_a_tool_call(
    aiohttp_server: Servers, db_path: Path, cleanup: list[object]
) -> None:
    first, second = await _fake(aiohttp_server), await _fake(aiohttp_server)
    first.script = [
        tools(("sleep", {"seconds": 0}), say="Let me wait."),
        Reply(blocks=[{"type": "text", "text": "Half of"}], stream_error="overloaded_error"),
    ]
    second.script = [text("The whole answer.")]
    clock = SystemClock()
    chain = Chain(
        [
            Candidate(
                "anthropic",
                key,
                model,
                AnthropicProvider(model, api_key="k", base_url=fake.url, max_attempts=1),
            )
            for fake, key, model in (
                (first, "key1", "claude-sonnet-4-5"),
                (second, "key2", "claude-haiku-4-5"),
            )
        ],
        Cooldowns(clock),
    )
    provider = OneSession(chain)
    agent = AgentSpec("assistant", "You are a test agent.", ("sleep",))
    rt = await Runtime.open(db_path, provider=provider, agents=[agent], clock=clock)
    cleanup.append(rt)
    provider.session_id = await rt.create_session("assistant")
    await rt.submit(provider.session_id, operator("wait, then answer"))
    await rt.wait_idle()

    [run] = await rt.store.runs(session_id=provider.session_id)
    assert run.status is RunStatus.COMPLETED and run.final_text == "The whole answer."
    assert len(await rt.store.tool_calls()) == 1, "the tool call was not repeated"
    [asked] = second.requests
    assert asked["model"] == "claude-haiku-4-5"
    sent = [b["type"] for m in asked["messages"] for b in m["content"]]
    assert "tool_use" in sent and "tool_result" in sent and second.refused == []
    [retry] = await all_events(rt, EventType.PROVIDER_RETRY)
    assert retry.data.error.startswith(
        "falling back from anthropic:claude-sonnet-4-5 to anthropic:claude-haiku-4-5"
    )
    assert chain.health.state(chain.primary) is State.OPEN
    assert chain.current(provider.session_id).model == "claude-haiku-4-5"
