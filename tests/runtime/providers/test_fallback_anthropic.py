"""The fallback chain through the real Anthropic provider (max_attempts=1) and the SDK,
against two loopback Anthropic fakes: the real errors, mapped once, drive the moves."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from pytest_aiohttp import AiohttpServer

from runtime.clock import ManualClock
from runtime.errors import ProviderError
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.base import ProviderRequest, StopReason
from runtime.providers.cooldowns import Candidate, Cooldowns, State, key_label
from runtime.providers.fallback import Chain, FallbackPolicy
from runtime.transcript import TextBlock, TranscriptMessage
from tests.fakes.anthropic_api import FakeAnthropic, Reply, error, text

Servers = Callable[..., Awaitable[AiohttpServer]]


async def _fake(aiohttp_server: Servers) -> FakeAnthropic:
    fake = FakeAnthropic()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


@pytest.fixture
async def fakes(aiohttp_server: Servers) -> tuple[FakeAnthropic, FakeAnthropic]:
    return await _fake(aiohttp_server), await _fake(aiohttp_server)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def disabled() -> list[tuple[str, str]]:
    """What the admin was told of disabled keys: (candidate, error)."""
    return []


@pytest.fixture
async def chain(
    fakes: tuple[FakeAnthropic, FakeAnthropic],
    clock: ManualClock,
    disabled: list[tuple[str, str]],
) -> AsyncIterator[Chain]:
    candidates = [
        Candidate(
            "anthropic",
            key,
            model,
            AnthropicProvider(
                model, api_key="test-key", base_url=fake.url, max_attempts=1, clock=clock
            ),
            price=3.0,
        )
        for fake, key, model in zip(
            fakes,
            (key_label("test-key"), key_label("test-key")),
            ("claude-sonnet-4-5", "claude-haiku-4-5"),
            strict=True,
        )
    ]
    health = Cooldowns(clock, on_disabled=lambda c, e: disabled.append((c.label, str(e))))
    built = Chain(candidates, health, FallbackPolicy(probe_interval_s=30))
    yield built
    for candidate in candidates:
        await candidate.provider.close()


PRIMARY, SECOND = "anthropic:claude-sonnet-4-5", "anthropic:claude-haiku-4-5"


def ask(prompt: str = "hi") -> ProviderRequest:
    row = TranscriptMessage(role="user", blocks=[TextBlock(text=prompt)])
    return ProviderRequest("claude-sonnet-4-5", "You help.", [row], [], 200)


async def test_529_falls_back_the_session_stays_and_returns_after_a_probe(
    chain: Chain, fakes: tuple[FakeAnthropic, FakeAnthropic], clock: ManualClock
) -> None:
    first, second = fakes
    first.script = [
        Reply(blocks=[{"type": "text", "text": "half"}], stream_error="overloaded_error")
    ]
    second.script = [text("from the second"), text("still the second")]
    session = chain.for_session("s1")
    told: list[str] = []
    answer = await session.complete(ask(), lambda d: None, lambda *a: told.append(a[2]))
    assert answer.text() == "from the second" and answer.model == "claude-haiku-4-5"
    assert second.requests[0]["model"] == "claude-haiku-4-5"
    assert told == [f"falling back from {PRIMARY} to {SECOND}: " + told[0].split(": ", 1)[1]]
    assert "overloaded" in told[0]
    assert (await chain.turn_starts("s1")).label == SECOND, "the primary is still open"
    assert (await session.complete(ask(), print, print)).text() == "still the second"
    assert len(first.requests) == 1

    await clock.advance(10)  # the circuit's first opening is over: half-open
    assert (await chain.turn_starts("s1")).label == PRIMARY
    probe = first.requests[-1]
    assert probe["max_tokens"] == 1 and "tools" not in probe
    assert probe["messages"][0]["content"][0]["text"] == "ping"
    first.script = [text("back on the first")]
    assert (await session.complete(ask(), print, print)).text() == "back on the first"
    assert len(second.requests) == 2 and first.refused == [] and second.refused == []


async def test_a_400_never_falls_back(
    chain: Chain, fakes: tuple[FakeAnthropic, FakeAnthropic]
) -> None:
    first, second = fakes
    first.script = [error(400, "invalid_request_error", "messages: bad")]
    with pytest.raises(ProviderError, match="400"):
        await chain.for_session("s1").complete(ask(), print, print)
    assert second.requests == [] and chain.health.state(chain.primary) is State.READY


async def test_a_refusal_never_falls_back(
    chain: Chain, fakes: tuple[FakeAnthropic, FakeAnthropic]
) -> None:
    first, second = fakes
    first.script = [Reply(blocks=[], stop_reason="refusal")]
    answer = await chain.for_session("s1").complete(ask(), print, print)
    assert answer.stop_reason is StopReason.REFUSAL and second.requests == []


async def test_a_402_holds_the_primary_for_hours(
    chain: Chain, fakes: tuple[FakeAnthropic, FakeAnthropic], clock: ManualClock
) -> None:
    first, _ = fakes
    first.script = [error(402, "billing_error", "Your credit balance is too low")]
    await chain.for_session("s1").complete(ask(), print, print)
    assert chain.health.state(chain.primary) is State.HELD
    await clock.advance(2 * 3600)
    assert (await chain.turn_starts("s1")).label == SECOND and len(first.requests) == 1
    await clock.advance(3600)
    assert (await chain.turn_starts("s1")).label == PRIMARY


async def test_a_401_disables_the_key_and_tells_the_admin(
    chain: Chain,
    fakes: tuple[FakeAnthropic, FakeAnthropic],
    clock: ManualClock,
    disabled: list[tuple[str, str]],
) -> None:
    first, _ = fakes
    first.api_key = "another-key"  # the fake refuses ours, as the API does
    answer = await chain.for_session("s1").complete(ask(), print, print)
    assert answer.model == "claude-haiku-4-5"
    assert chain.health.state(chain.primary) is State.DISABLED
    [(label, reason)] = disabled
    assert label == PRIMARY and "401" in reason and "test-key" not in reason
    await clock.advance(86400)
    assert (await chain.turn_starts("s1")).label == SECOND and len(first.requests) == 0


async def test_a_fallbacks_429_leaves_the_primary_alone(
    chain: Chain, fakes: tuple[FakeAnthropic, FakeAnthropic]
) -> None:
    first, second = fakes
    first.script = [error(529, "overloaded_error", "Overloaded")]
    second.script = [text("b"), error(429, "rate_limit_error", "slow down", **{"retry-after": "7"})]
    session = chain.for_session("s1")
    await session.complete(ask(), print, print)
    open_for = chain.health.back_in(chain.primary)
    with pytest.raises(ProviderError, match="429") as raised:
        await session.complete(ask(), print, print)
    assert len(first.requests) == 1, "the primary was not asked"
    [h1, h2] = chain.snapshot().candidates
    assert (h1.state, h2.state) == (State.OPEN, State.COOLING)
    assert chain.health.back_in(chain.primary) == open_for, "its cooldown untouched"
    assert chain.health.back_in(chain.candidates[1]) == pytest.approx(7)
    assert f"Soonest back: {SECOND}" in str(raised.value)
