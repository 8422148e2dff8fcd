"""The pacer at full load, on a manual clock (no real waiting, nothing timed for real): many
chats' replies against the platforms' real pacing rules and a simulated platform whose
requests take a while to arrive and to be answered. What a user would notice either way: a
429 (a window broken where the platform counts, on arrival) or delivery slower than the
platform allows."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

from adapters.slack.platform import SLACK
from adapters.telegram.platform import TELEGRAM
from bridge.ratelimit import RateLimiter
from bridge.types import Route, TransportLimits
from runtime.clock import ManualClock
from tests.bridge.test_pacing_and_progress import windows_hold

STEP_S = 0.001


@dataclass
class Platform:
    """Calls as the platform sees them: each arrives some time after it was sent and is
    answered some time after that (both drawn from a seeded generator)."""

    clock: ManualClock
    seed: int = 7
    most_latency_s: float = 0.04
    arrivals: list[tuple[str, float]] = field(default_factory=list)  # (channel, arrived at)
    starts: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    async def send(self, limiter: RateLimiter, route: Route) -> None:
        ticket = await limiter.acquire(route)
        now = self.clock.monotonic()
        latency = self._random.uniform(0.002, self.most_latency_s)
        self.starts.append(now)
        self.arrivals.append((route.channel_key, now + self._random.uniform(0, latency)))
        await self.clock.sleep(latency)
        ticket.done()


async def deliver(clock: ManualClock, platform: Platform, routes: list[Route], each: int) -> None:
    """Each route's replies one after another, as the outbox's worker for a conversation
    sends them; all routes at once."""
    limiter = RateLimiter(clock, _limits(routes[0]))

    async def conversation(route: Route) -> None:
        for _ in range(each):
            await platform.send(limiter, route)

    work = asyncio.gather(*(conversation(r) for r in routes))
    while not work.done():
        await clock.advance(STEP_S)
    await work


def _limits(route: Route) -> TransportLimits:
    return TELEGRAM.limits if route.platform == TELEGRAM.name else SLACK.limits


def telegram_chat(n: int) -> Route:
    return Route(platform=TELEGRAM.name, workspace_id="acme", conversation_id=str(2000 + n))


def sustained_rate(starts: list[float]) -> float:
    """Calls a second over the second half of the run (the start's burst left out)."""
    half = sorted(starts)[len(starts) // 2 :]
    return (len(half) - 1) / (half[-1] - half[0])


async def test_telegram_replies_to_many_chats_go_near_thirty_a_second_and_never_break_a_limit() -> (
    None
):
    for chats, each in ((40, 6), (150, 2)):
        clock = ManualClock()
        platform = Platform(clock)
        await deliver(clock, platform, [telegram_chat(n) for n in range(chats)], each)
        arrivals = [at for _, at in platform.arrivals]
        assert len(arrivals) == chats * each
        assert windows_hold(arrivals, 30, 1.0), "never more than 30 arrive in a second"
        for n in range(chats):
            key = telegram_chat(n).channel_key
            mine = [at for channel, at in platform.arrivals if channel == key]
            assert windows_hold(mine, 1, 1.0), f"chat {n}: one a second"
        rate = sustained_rate(platform.starts)
        assert 28.5 <= rate <= 30.0, f"{chats} chats: {rate:.2f} messages a second"


async def test_slack_threads_of_a_few_channels_do_not_hold_up_the_other_channels() -> None:
    """Twenty threads in each of eight channels, a reply each: the channels take a post a
    second each, so the 160 replies go at about 7 a second, not one channel at a time."""
    clock = ManualClock()
    platform = Platform(clock, most_latency_s=0.1)
    routes = [
        Route(platform=SLACK.name, workspace_id="T1", conversation_id=f"C{c}", thread_id=f"{t}")
        for t in range(20)
        for c in range(8)
    ]
    start = clock.monotonic()
    await deliver(clock, platform, routes, 1)
    took = clock.monotonic() - start
    for c in range(8):
        mine = [at for channel, at in platform.arrivals if channel == routes[c].channel_key]
        assert len(mine) == 20 and windows_hold(mine, 1, 1.0), f"channel C{c}: one a second"
    assert took < 20 * 1.5, f"160 replies in 8 channels took {took:.1f} s"
