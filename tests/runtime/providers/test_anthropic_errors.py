"""What each of Anthropic's API failures means to a fallback: its `Failure`, and the wait it
asked for; a wait too long for a retry here is still told to the fallback."""

from __future__ import annotations

import asyncio

import pytest

from runtime.clock import ManualClock
from runtime.errors import Failure, ProviderError
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.base import ProviderRequest
from runtime.transcript import TextBlock, TranscriptMessage
from tests.fakes.anthropic_api import FakeAnthropic, Reply, error
from tests.runtime.helpers import MODEL

REQUEST = ProviderRequest(
    MODEL, "", [TranscriptMessage(role="user", blocks=[TextBlock(text="hi")])], [], 256
)
NO_CREDIT = "Your credit balance is too low to access the Anthropic API."


def ignore(*_: object) -> None:
    """Streamed text and retry notices, where a test does not look at them."""


def provider(
    fake: FakeAnthropic, attempts: int = 1, clock: ManualClock | None = None
) -> AnthropicProvider:
    return AnthropicProvider(
        MODEL, api_key="test-key", base_url=fake.url, max_attempts=attempts, clock=clock
    )


@pytest.mark.parametrize(
    "reply,failure,retry_after",
    [
        (error(429, "rate_limit_error", "slow down", **{"retry-after": "30"}), "rate_limited", 30),
        (
            error(529, "overloaded_error", "Overloaded", **{"retry-after-ms": "250"}),
            "overloaded",
            0.25,
        ),
        (error(500, "api_error", "Internal server error"), Failure.OVERLOADED, None),
        (error(402, "billing_error", "Payment required"), Failure.BILLING, None),
        (error(400, "invalid_request_error", NO_CREDIT), Failure.BILLING, None),
        (error(401, "authentication_error", "invalid x-api-key"), Failure.AUTH, None),
        (error(403, "permission_error", "not allowed"), Failure.AUTH, None),
        (error(400, "invalid_request_error", "max_tokens: too big"), Failure.INVALID, None),
        (
            Reply([{"type": "text", "text": "a"}], stream_error="overloaded_error"),
            "overloaded",
            None,
        ),
    ],
)
async def test_each_error_is_mapped_to_its_failure_with_the_wait_asked_for(
    anthropic_api: FakeAnthropic, reply: Reply, failure: Failure, retry_after: float | None
) -> None:
    anthropic_api.script = [reply]
    claude = provider(anthropic_api)
    with pytest.raises(ProviderError) as raised:
        await claude.complete(REQUEST, ignore, ignore)
    await claude.close()
    assert raised.value.failure == failure and raised.value.retry_after == retry_after
    assert raised.value.retryable is (failure in ("rate_limited", "overloaded"))
    assert len(anthropic_api.requests) == 1


async def test_a_long_retry_after_is_not_waited_here_but_told_to_the_fallback(
    anthropic_api: FakeAnthropic,
) -> None:
    anthropic_api.script = [
        error(429, "rate_limit_error", "slow down", **{"retry-after": "3600"}),
        error(429, "rate_limit_error", "slow down", **{"retry-after": "3600"}),
    ]
    clock = ManualClock()
    claude = provider(anthropic_api, attempts=2, clock=clock)
    waits: list[float] = []
    told = asyncio.Event()

    def on_retry(attempt: int, delay: float, reason: str) -> None:
        waits.append(delay)
        told.set()

    attempt = asyncio.create_task(claude.complete(REQUEST, ignore, on_retry))
    await asyncio.wait_for(told.wait(), 10)
    assert waits[0] <= 8, "a backoff, not the hour asked for"
    await clock.advance(waits[0])
    with pytest.raises(ProviderError) as raised:
        await attempt
    await claude.close()
    assert raised.value.failure is Failure.RATE_LIMITED and raised.value.retry_after == 3600
