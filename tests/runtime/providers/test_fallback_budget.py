"""The budget is asked before every fallback call, at the fallback's own model (issue 41, item
5): a turn whose first provider fails goes to the dearer second only when the spend gate lets
that model's call through; refused, the second is never called and the turn fails saying so.
Through the runtime, with the agent's chain given as the config's assembly gives it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from pytest_aiohttp import AiohttpServer

from runtime.agents import AgentSpec
from runtime.clock import SystemClock
from runtime.engine import Runtime
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.cooldowns import Candidate, Cooldowns
from runtime.providers.fallback import Chain, FallbackPolicy
from runtime.records import RunStatus
from runtime.spend import CallRecording, Charge, HoldKind, PlannedCall, SpendHold
from tests.fakes.anthropic_api import FakeAnthropic, error, text
from tests.runtime.helpers import operator

Servers = Callable[..., Awaitable[AiohttpServer]]
CHEAP, DEAR = "claude-haiku-4-5", "claude-opus-4-1"


class Gate:
    """A spend gate that holds every call of `refused` models, and says what it was asked."""

    def __init__(self, refused: set[str]) -> None:
        self.refused = refused
        self.asked: list[str] = []

    async def before_call(self, call: PlannedCall) -> SpendHold | None:
        self.asked.append(call.model)
        if call.model in self.refused:
            return SpendHold(HoldKind.END, "the day's budget is spent", "workspace/day", None)
        return None

    def settled(self, w: CallRecording, charge: Charge) -> None:
        pass

    async def finished(self, charge: Charge) -> None:
        pass


async def _fake(aiohttp_server: Servers) -> FakeAnthropic:
    fake = FakeAnthropic()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


@pytest.mark.parametrize("allowed", [True, False])
async def test_a_fallback_call_is_made_only_when_the_budget_lets_its_model_through(
    allowed: bool, aiohttp_server: Servers, db_path: Path, cleanup: list[object]
) -> None:
    first, second = await _fake(aiohttp_server), await _fake(aiohttp_server)
    first.script = [error(529, "overloaded_error", "Overloaded")]
    second.script = [text("From the dearer one.")]
    clock = SystemClock()
    chain = Chain(
        [
            Candidate(
                name,
                "key",
                model,
                AnthropicProvider(model, api_key="k", base_url=fake.url, max_attempts=1),
                price,
            )
            for name, fake, model, price in (
                ("first", first, CHEAP, 1.0),
                ("second", second, DEAR, 20.0),
            )
        ],
        Cooldowns(clock),
        FallbackPolicy(allow_costlier=True),
    )
    agent = AgentSpec("assistant", "You are a test agent.", (), chain="assistant")
    rt = await Runtime.open(
        db_path, provider=chain.candidates[0].provider, agents=[agent], chains={"assistant": chain}
    )
    cleanup.append(rt)
    gate = Gate(set() if allowed else {DEAR})
    rt.limit_spend(gate)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("Answer me."))
    await rt.wait_idle()

    [run] = await rt.store.runs(session_id=sid)
    assert gate.asked == [CHEAP, DEAR], "asked for the first model, then for the fallback's"
    if allowed:
        assert run.status is RunStatus.COMPLETED and run.final_text == "From the dearer one."
        assert len(second.requests) == 1
    else:
        assert run.status is RunStatus.FAILED and "the budget refused it" in (run.error or "")
        assert second.requests == [], "a fallback the budget refused was called"
