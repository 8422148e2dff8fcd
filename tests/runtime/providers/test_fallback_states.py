"""A fallback candidate's health by error class (runtime/providers/cooldowns.py), on a
`ManualClock`: cooling, the circuit and its half-open probe, billing holds, refused keys."""

from __future__ import annotations

import pytest

from runtime.clock import ManualClock
from runtime.errors import ContextWindowExceededError, ProviderError
from runtime.providers.cooldowns import (
    Candidate,
    CooldownPolicy,
    Cooldowns,
    State,
    key_label,
)
from tests.runtime.providers.test_fallback_chain import Scripted


def candidate(name: str = "anthropic", key: str = "key1", model: str = "m") -> Candidate:
    return Candidate(name, key, model, Scripted(model))


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


async def test_a_429_cools_for_its_retry_after_then_the_candidate_is_ready(
    clock: ManualClock,
) -> None:
    health, c = Cooldowns(clock), candidate()
    health.failed(c, ProviderError("slow down", status=429, retry_after=7))
    assert health.state(c) is State.COOLING and not health.usable(c)
    assert health.back_in(c) == pytest.approx(7)
    await clock.advance(6.9)
    assert not health.usable(c)
    await clock.advance(0.2)
    assert health.state(c) is State.READY and health.acquire(c)


async def test_a_429_without_retry_after_cools_for_the_default(clock: ManualClock) -> None:
    health, c = Cooldowns(clock, CooldownPolicy(rate_limit_s=30)), candidate()
    health.failed(c, ProviderError("slow down", status=429))
    await clock.advance(29)
    assert not health.usable(c)
    await clock.advance(1)
    assert health.usable(c)


async def test_overload_opens_the_circuit_for_twice_as_long_each_time_up_to_the_cap(
    clock: ManualClock,
) -> None:
    health = Cooldowns(clock, CooldownPolicy(open_s=10, open_max_s=35))
    c = candidate()
    waits = []
    for _ in range(4):
        health.failed(c, ProviderError("overloaded", status=529))
        assert health.state(c) is State.OPEN
        waits.append(health.back_in(c))
        await clock.advance(waits[-1] or 0)
        assert health.state(c) is State.HALF_OPEN
        assert health.acquire(c), "the half-open probe goes through"
    assert waits == [10, 20, 35, 35]


async def test_half_open_lets_exactly_one_probe_through_and_its_success_closes_it(
    clock: ManualClock,
) -> None:
    health, c = Cooldowns(clock, CooldownPolicy(open_s=10)), candidate()
    health.failed(c, ProviderError("no answer", status=None))  # unreachable
    await clock.advance(10)
    assert health.acquire(c)
    assert not health.acquire(c) and not health.usable(c), "one probe at a time"
    health.succeeded(c)
    assert health.state(c) is State.READY
    assert health.acquire(c) and health.acquire(c), "closed: every request goes"
    health.failed(c, ProviderError("overloaded", status=529))
    assert health.back_in(c) == pytest.approx(10), "the doubling starts again once closed"


async def test_a_failed_probe_opens_it_again_and_a_cancelled_probe_frees_its_place(
    clock: ManualClock,
) -> None:
    health, c = Cooldowns(clock, CooldownPolicy(open_s=10)), candidate()
    health.failed(c, ProviderError("overloaded", status=529))
    await clock.advance(10)
    assert health.acquire(c)
    health.failed(c, ProviderError("overloaded", status=503))
    assert health.state(c) is State.OPEN and health.back_in(c) == pytest.approx(20)
    await clock.advance(20)
    assert health.acquire(c)
    health.release(c)  # the turn was stopped: no verdict
    assert health.state(c) is State.HALF_OPEN and health.acquire(c)


async def test_a_second_failure_while_open_does_not_double_it_again(clock: ManualClock) -> None:
    """Two sessions' requests sent before it opened both fail: one opening, not two."""
    health, c = Cooldowns(clock, CooldownPolicy(open_s=10)), candidate()
    health.failed(c, ProviderError("overloaded", status=529))
    health.failed(c, ProviderError("overloaded", status=529))
    assert health.back_in(c) == pytest.approx(10)


async def test_billing_holds_it_for_hours(clock: ManualClock) -> None:
    health, c = Cooldowns(clock), candidate()
    health.failed(c, ProviderError("credit balance too low", status=402))
    assert health.state(c) is State.HELD
    await clock.advance(3 * 3600 - 1)
    assert not health.usable(c)
    await clock.advance(1)
    assert health.usable(c)


async def test_a_refused_key_is_disabled_until_a_reload_and_the_admin_is_told_once(
    clock: ManualClock,
) -> None:
    told: list[tuple[Candidate, str]] = []
    health = Cooldowns(clock, on_disabled=lambda c, error: told.append((c, str(error))))
    c, other_key = candidate(key="key1"), candidate(key="key2")
    health.failed(c, ProviderError("invalid x-api-key", status=401))
    health.failed(c, ProviderError("invalid x-api-key", status=401))
    assert told == [(c, "invalid x-api-key")]
    await clock.advance(365 * 86400)
    assert health.state(c) is State.DISABLED and health.back_in(c) is None
    assert health.usable(other_key), "another key of the same provider is its own candidate"
    health.reset()
    assert health.usable(c)


async def test_the_requests_own_faults_leave_its_health_alone(clock: ManualClock) -> None:
    health, c = Cooldowns(clock), candidate()
    health.failed(c, ProviderError("bad request", status=400))
    health.failed(c, ContextWindowExceededError("prompt is too long", status=400))
    assert health.state(c) is State.READY and health.health(c).last_failure is None


async def test_health_shows_state_until_when_and_the_last_failure(clock: ManualClock) -> None:
    health, c = Cooldowns(clock), candidate()
    health.failed(c, ProviderError("Anthropic API 529 overloaded_error: Overloaded", status=529))
    [shown] = health.snapshot()
    assert shown.candidate == c and shown.state is State.OPEN
    assert shown.until == pytest.approx(clock.wall() + 10)
    assert shown.last_failure == "Anthropic API 529 overloaded_error: Overloaded"
    assert shown.failure is not None and shown.failure.value == "overloaded"


def test_a_candidate_is_the_same_by_name_key_and_model_whatever_its_provider() -> None:
    a, b = candidate(), Candidate("anthropic", "key1", "m", Scripted("m"), price=3.0)
    assert a == b and hash(a) == hash(b)
    assert a != candidate(key="key2") and a != candidate(model="other")
    assert a.label == "anthropic:m"


def test_a_key_is_labelled_without_being_shown() -> None:
    secret = "test-key-not-a-real-one"
    label = key_label(secret)
    assert len(label) == 8 and label not in secret and label == key_label(secret)
    assert key_label("test-key-another") != label and key_label(None) == "env"
