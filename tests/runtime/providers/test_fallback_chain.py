"""The fallback chain over scripted providers (runtime/providers/fallback.py): which
candidate a call goes to, what never falls back, the cost guard, attempts and the error
that says what was tried."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from config.prices import PriceConfig, PriceTable
from runtime.clock import ManualClock
from runtime.errors import Failure, ProviderError
from runtime.providers.base import ProviderRequest, ProviderResponse, StopReason
from runtime.providers.cooldowns import Candidate, Cooldowns, State
from runtime.providers.fallback import Chain, FallbackPolicy, blended_price
from runtime.transcript import TextBlock, TranscriptMessage

HANG = "hang"


class Scripted:
    """A provider that plays its script: an answer's text, a `ProviderError` to raise,
    `HANG` (never answers), or a `StopReason` (an empty answer with it); then "ok"."""

    def __init__(self, model: str, *script: str | ProviderError | StopReason) -> None:
        self.model = model
        self.script = list(script)
        self.requests: list[ProviderRequest] = []

    async def complete(self, request, on_text, on_retry) -> ProviderResponse:  # type: ignore[no-untyped-def]
        self.requests.append(request)
        step = self.script.pop(0) if self.script else "ok"
        if isinstance(step, ProviderError):
            on_text("half an ans")  # it had streamed some before it failed
            raise step
        if isinstance(step, StopReason):
            return ProviderResponse([], step, request.model)
        if step == HANG:
            await asyncio.Event().wait()
        on_text(step)
        return ProviderResponse([TextBlock(text=step)], StopReason.END_TURN, request.model)

    async def close(self) -> None:
        pass


def request() -> ProviderRequest:
    hello = TranscriptMessage(role="user", blocks=[TextBlock(text="hello")])
    return ProviderRequest("agent-model", "You help.", [hello], [], 100)


def chain_of(
    *providers: Scripted,
    prices: Sequence[float | None] = (),
    clock: ManualClock | None = None,
    **policy: Any,
) -> Chain:
    prices = list(prices) or [None] * len(providers)
    candidates = [
        Candidate(f"p{i}", "key1", p.model, p, price)
        for i, (p, price) in enumerate(zip(providers, prices, strict=True))
    ]
    return Chain(candidates, Cooldowns(clock or ManualClock()), FallbackPolicy(**policy))


OVERLOADED = ProviderError("Anthropic API 529 overloaded_error: Overloaded", status=529)


async def test_an_overloaded_primary_falls_back_and_the_switch_is_told() -> None:
    first, second = Scripted("a", OVERLOADED), Scripted("b", "from b")
    chain = chain_of(first, second)
    told: list[str] = []  # in the order the turn hears it: what it must drop comes first

    def on_retry(attempt: int, delay: float, reason: str) -> None:
        told.append(f"retry {attempt} after {delay}: {reason}")

    response = await chain.for_session("s1").complete(
        request(), lambda delta: told.append(f"text: {delta}"), on_retry
    )
    assert response.text() == "from b" and second.requests[0].model == "b"
    assert first.requests[0].model == "a", "each candidate is asked for its own model"
    assert told == [
        "text: half an ans",
        "retry 1 after 0.0: falling back from p0:a to p1:b: "
        "Anthropic API 529 overloaded_error: Overloaded",
        "text: from b",
    ]
    assert chain.health.state(chain.candidates[0]) is State.OPEN


async def test_the_session_stays_on_its_fallback_and_other_sessions_skip_the_open_primary() -> None:
    first, second = Scripted("a", OVERLOADED), Scripted("b")
    chain = chain_of(first, second)
    s1, s2 = chain.for_session("s1"), chain.for_session("s2")
    await s1.complete(request(), print, print)
    assert s1.model == "b" and chain.current("s1").model == "b"
    await s1.complete(request(), print, print)
    told: list[str] = []
    await s2.complete(request(), print, lambda *a: told.append(a[2]))
    assert len(first.requests) == 1 and len(second.requests) == 3
    assert told and "open" in told[0], "the skip is told too: why this session moved"
    snap = chain.snapshot()
    assert snap.sessions == {"s1": "p1:b", "s2": "p1:b"}
    assert snap.switches == {
        ("p0:a", "p1:b", "overloaded"): 1,
        ("p0:a", "p1:b", "open"): 1,
    }
    assert [h.state for h in snap.candidates] == [State.OPEN, State.READY]


async def test_a_bad_request_never_falls_back() -> None:
    bad = ProviderError("Anthropic API 400 invalid_request_error: tools: bad", status=400)
    first, second = Scripted("a", bad), Scripted("b")
    chain = chain_of(first, second)
    with pytest.raises(ProviderError) as raised:
        await chain.for_session("s1").complete(request(), print, print)
    assert raised.value is bad and second.requests == []
    assert chain.health.state(chain.candidates[0]) is State.READY


async def test_a_refusal_is_the_answer_not_a_reason_to_fall_back() -> None:
    first, second = Scripted("a", StopReason.REFUSAL), Scripted("b")
    chain = chain_of(first, second)
    response = await chain.for_session("s1").complete(request(), print, print)
    assert response.stop_reason is StopReason.REFUSAL and second.requests == []


async def test_a_fallbacks_429_marks_only_that_fallback() -> None:
    limited = ProviderError("rate limited", status=429, retry_after=7)
    first, second, third = Scripted("a", OVERLOADED), Scripted("b", limited), Scripted("c")
    clock = ManualClock()
    chain = chain_of(first, second, third, clock=clock, max_attempts=5)
    response = await chain.for_session("s1").complete(request(), print, print)
    assert response.text() == "ok" and chain.current("s1").model == "c"
    states = [h.state for h in chain.snapshot().candidates]
    assert states == [State.OPEN, State.COOLING, State.READY]
    assert chain.health.back_in(chain.candidates[1]) == pytest.approx(7)
    assert len(first.requests) == 1, "the primary's key was not asked again"


async def test_it_keeps_going_down_a_long_list_until_the_attempts_run_out() -> None:
    failing = [Scripted(f"m{i}", OVERLOADED) for i in range(17)]
    chain = chain_of(*failing, max_attempts=6)
    with pytest.raises(ProviderError) as raised:
        await chain.for_session("s1").complete(request(), print, print)
    assert [len(p.requests) for p in failing] == [1] * 6 + [0] * 11
    assert "stopped after 6 attempts" in str(raised.value)
    last = Scripted("last")
    chain = chain_of(*[Scripted(f"m{i}", OVERLOADED) for i in range(16)], last, max_attempts=17)
    assert (await chain.for_session("s1").complete(request(), print, print)).text() == "ok"


async def test_when_none_can_answer_the_error_says_what_each_did_and_the_soonest_back() -> None:
    limited = ProviderError("rate limited", status=429, retry_after=7)
    chain = chain_of(Scripted("a", OVERLOADED), Scripted("b", limited), Scripted("c"))
    chain.health.failed(chain.candidates[2], ProviderError("low credit", status=402))
    with pytest.raises(ProviderError) as raised:
        await chain.for_session("s1").complete(request(), print, print)
    error = raised.value
    assert "p0:a failed (Anthropic API 529" in str(error)
    assert "p1:b failed (rate limited)" in str(error)
    assert "p2:c skipped (held for 10800 s: low credit)" in str(error)
    assert "Soonest back: p1:b at" in str(error)
    assert error.failure is Failure.RATE_LIMITED and error.retry_after == pytest.approx(7)


async def test_an_attempt_that_does_not_answer_in_time_counts_as_unreachable() -> None:
    first, second = Scripted("a", HANG), Scripted("b", "in time")
    chain = chain_of(first, second, attempt_timeout_s=0.05)
    told: list[str] = []
    response = await chain.for_session("s1").complete(
        request(), print, lambda *a: told.append(a[2])
    )
    assert response.text() == "in time" and "did not answer within 0.05 s" in told[0]
    assert chain.health.health(chain.candidates[0]).failure is Failure.UNREACHABLE
    slow, own = Scripted("slow", HANG), Scripted("own limit", "ok")
    candidates = [
        Candidate("slow", "k", "slow", slow, timeout_s=0.05),
        Candidate("next", "k", "next", own),
    ]
    chain = Chain(candidates, Cooldowns(ManualClock()), FallbackPolicy(attempt_timeout_s=60))
    told.clear()
    await chain.for_session("s1").complete(request(), print, lambda *a: told.append(a[2]))
    assert "did not answer within 0.05 s" in told[0], "a candidate's own limit first"


async def test_a_half_open_candidate_takes_one_call_as_its_probe_and_a_stop_frees_it() -> None:
    clock = ManualClock()
    first = Scripted("a", OVERLOADED, HANG)
    chain = chain_of(first, Scripted("b"), clock=clock)
    await chain.for_session("s1").complete(request(), print, print)
    await clock.advance(10)
    call = asyncio.create_task(chain.for_session("s2").complete(request(), print, print))
    await asyncio.sleep(0.01)
    assert chain.health.health(chain.candidates[0]).probing
    other = await chain.for_session("s3").complete(request(), print, print)
    assert other.model == "b" and len(first.requests) == 2, "one probe at a time"
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert chain.health.usable(chain.candidates[0])


async def test_costlier_fallbacks_only_when_allowed() -> None:
    def make(**policy: Any) -> Chain:
        dear, cheap = Scripted("dear", "dear answer"), Scripted("cheap", "cheap answer")
        return chain_of(Scripted("a", OVERLOADED), dear, cheap, prices=[3.0, 15.0, 1.0], **policy)

    plain = await make().for_session("s").complete(request(), print, print)
    assert plain.text() == "cheap answer"
    allowed = await make(allow_costlier=True).for_session("s").complete(request(), print, print)
    assert allowed.text() == "dear answer"


async def test_cheaper_only_skips_dearer_and_unpriced_fallbacks() -> None:
    def make() -> Chain:
        return chain_of(
            Scripted("a", OVERLOADED),
            Scripted("dear"),
            Scripted("unpriced"),
            Scripted("same", "same price"),
            prices=[3.0, 15.0, None, 3.0],
            allow_costlier=True,
            max_attempts=4,
        )

    heartbeat = make().for_session("s", cheaper_only=True)
    assert (await heartbeat.complete(request(), print, print)).text() == "same price"
    only_dear = chain_of(Scripted("a", OVERLOADED), Scripted("dear"), prices=[3.0, 15.0])
    with pytest.raises(ProviderError, match=r"dearer than the primary \(cheaper only\)"):
        await only_dear.for_session("s", cheaper_only=True).complete(request(), print, print)
    operators = make().for_session("s")
    assert (await operators.complete(request(), print, print)).model == "dear"


async def test_the_budget_is_asked_before_each_fallback_call_and_can_stop_it() -> None:
    asked: list[str] = []

    async def budget(candidate: Candidate) -> bool:
        asked.append(candidate.model)
        return candidate.model != "c"

    first, second, third = Scripted("a", OVERLOADED), Scripted("b", OVERLOADED), Scripted("c")
    chain = chain_of(first, second, third)
    with pytest.raises(ProviderError, match="the budget refused it") as raised:
        await chain.for_session("s", before_fallback=budget).complete(request(), print, print)
    assert asked == ["b", "c"] and third.requests == []
    assert raised.value.failure is Failure.OVERLOADED


async def test_a_candidates_price_blends_three_input_tokens_to_one_output() -> None:
    table = PriceTable.with_overrides(
        {"strong": PriceConfig(input=5.0, output=25.0), "quick": PriceConfig(input=1, output=5)}
    )
    prices = [blended_price(table, m) for m in ("strong", "quick", "nameless-local-model")]
    assert prices == [10.0, 2.0, None]
    chain = chain_of(Scripted("strong", OVERLOADED), Scripted("quick"), prices=prices[:2])
    session = chain.for_session("s", cheaper_only=True)
    assert (await session.complete(request(), print, print)).model == "quick"


async def test_a_bad_request_as_the_half_open_probe_leaves_the_probe_to_the_next_call() -> None:
    clock = ManualClock()
    bad = ProviderError("Anthropic API 400 invalid_request_error: bad", status=400)
    first = Scripted("a", OVERLOADED, bad)
    chain = chain_of(first, Scripted("b"), clock=clock)
    await chain.for_session("s1").complete(request(), print, print)
    await clock.advance(10)
    with pytest.raises(ProviderError, match="400"):
        await chain.for_session("s2").complete(request(), print, print)
    assert chain.health.state(chain.primary) is State.HALF_OPEN
    assert (await chain.for_session("s3").complete(request(), print, print)).model == "a"
