"""An attempt's timeout is a limit on silence, not on the answer (runtime/providers/fallback.py):
a long answer still streaming is never cut and never marks its provider; one that says
nothing for the limit is left for the next candidate. A request that fails late, after the
circuit opened and another took its probe, neither ends that probe nor doubles the rest."""

from __future__ import annotations

import asyncio

from runtime.clock import ManualClock
from runtime.errors import ProviderError
from runtime.providers.base import ProviderRequest, ProviderResponse, StopReason
from runtime.providers.cooldowns import Candidate, CooldownPolicy, Cooldowns, State
from runtime.providers.fallback import Chain, FallbackPolicy
from runtime.transcript import TextBlock, TranscriptMessage


class Streaming:
    """Streams `words` words, `gap_s` apart (after `silent_s` of nothing), then answers."""

    def __init__(self, model: str, words: int, gap_s: float, silent_s: float = 0.0) -> None:
        self.model = model
        self.words, self.gap_s, self.silent_s = words, gap_s, silent_s

    async def complete(self, request, on_text, on_retry) -> ProviderResponse:  # type: ignore[no-untyped-def]
        await asyncio.sleep(self.silent_s)
        for n in range(self.words):
            await asyncio.sleep(self.gap_s)
            on_text(f"w{n} ")
        text = "".join(f"w{n} " for n in range(self.words))
        return ProviderResponse([TextBlock(text=text)], StopReason.END_TURN, request.model)

    async def close(self) -> None:
        pass


def request() -> ProviderRequest:
    hello = TranscriptMessage(role="user", blocks=[TextBlock(text="hello")])
    return ProviderRequest("m", "", [hello], [], 100)


def chain_of(first: Streaming, second: Streaming, health: Cooldowns) -> Chain:
    candidates = [Candidate(f"p{i}", "k", p.model, p) for i, p in enumerate((first, second))]
    return Chain(candidates, health, FallbackPolicy(attempt_timeout_s=0.2))


async def test_a_long_answer_still_streaming_is_not_cut() -> None:
    health = Cooldowns(ManualClock())
    first = Streaming("a", words=12, gap_s=0.05)  # 0.6 s in all, never 0.2 s silent
    chain = chain_of(first, Streaming("b", 1, 0), health)
    shown: list[str] = []
    answer = await chain.for_session("s1").complete(request(), shown.append, lambda *_: None)
    assert answer.model == "a" and len(shown) == 12
    assert health.state(chain.candidates[0]) is State.READY


async def test_an_attempt_silent_for_the_limit_goes_to_the_next() -> None:
    health = Cooldowns(ManualClock())
    chain = chain_of(Streaming("a", 1, 0, silent_s=1.0), Streaming("b", 1, 0), health)
    answer = await chain.for_session("s1").complete(request(), lambda _: None, lambda *_: None)
    assert answer.model == "b"
    assert health.state(chain.candidates[0]) is State.OPEN


async def test_a_late_failure_neither_ends_anothers_probe_nor_doubles_the_rest() -> None:
    clock = ManualClock()
    health = Cooldowns(clock, CooldownPolicy(open_s=10))
    [first] = chain_of(Streaming("a", 0, 0), Streaming("b", 0, 0), health).candidates[:1]
    overloaded = ProviderError("529 overloaded", status=529)
    assert health.acquire(first)  # a request goes out while the candidate is ready
    health.failed(first, overloaded, probe=False)  # another one's failure opens the circuit
    await clock.advance(10)
    assert health.state(first) is State.HALF_OPEN and health.acquire(first)  # the probe
    health.failed(first, overloaded, probe=False)  # the first request, failing late
    assert health.state(first) is State.HALF_OPEN, "the late failure counted again"
    assert not health.acquire(first), "a second probe while the first is in flight"
