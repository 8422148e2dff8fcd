"""Send pacing and the progress presenter, on a manual clock: no real waiting."""

from __future__ import annotations

import asyncio

from adapters.telegram.platform import TELEGRAM
from bridge.platforms import Platforms
from bridge.progress import ProgressPresenter
from bridge.ratelimit import RateLimiter
from bridge.transport import Budget, Call, Pacing, ProgressView, Rule, Scope
from bridge.types import Route, TransportLimits
from runtime.clock import ManualClock
from tests.bridge.fakes import RecordingTransport

ROUTE = Route(platform=TELEGRAM.name, workspace_id="acme", conversation_id="1")


def chat(conversation: str) -> Route:
    return Route(platform=TELEGRAM.name, workspace_id="acme", conversation_id=conversation)


def limits(interval_s: float, per_second: float) -> TransportLimits:
    return TransportLimits(
        max_chars=4096, per_conversation_interval_s=interval_s, global_per_second=per_second
    )


async def test_rate_limiter_spaces_sends_per_conversation_and_overall() -> None:
    clock = ManualClock()
    limiter = RateLimiter(clock, limits(1.0, 4.0))
    start = clock.monotonic()
    times: dict[str, list[float]] = {"a": [], "b": []}

    async def send(key: str) -> None:
        (await limiter.acquire(chat(key))).done()
        times[key].append(clock.monotonic() - start)

    tasks = [asyncio.create_task(send(k)) for k in ("a", "a", "a", "b", "b")]
    await asyncio.sleep(0)
    for _ in range(40):
        await clock.advance(0.125)
    await asyncio.gather(*tasks)
    assert times["a"] == [0.0, 1.0, 2.0], "one per second in a conversation"
    assert times["b"] == [0.25, 1.25], "and at most four per second overall"


async def test_retry_after_holds_back_its_chat_and_the_bots_window_it_may_have_flooded() -> None:
    clock = ManualClock()
    limiter = RateLimiter(clock, TELEGRAM_LIKE)  # the bot's longest shared window: 1 s
    limiter.back_off(chat("a"), Call.POST, 5.0)
    same_chat = asyncio.create_task(limiter.acquire(chat("a")))
    other_chat = asyncio.create_task(limiter.acquire(chat("b")))
    await clock.advance(0.9)
    assert not other_chat.done(), "the bot's shared windows wait out their length"
    await clock.advance(0.2)
    assert other_chat.done(), "then other chats go on"
    other_chat.result().done()
    await clock.advance(3.8)
    assert not same_chat.done(), "the chat waits all of the Retry-After"
    await clock.advance(0.2)
    assert same_chat.done()


async def test_progress_is_shown_at_once_then_on_change_and_refreshed() -> None:
    clock = ManualClock()
    transport = RecordingTransport()
    platforms = Platforms(clock)
    platforms.attach(transport)
    presenter = ProgressPresenter(platforms, clock, interval_s=4.0, min_gap_s=1.0)
    presenter.update(ROUTE, "run_1", "model round 1", 0.0)
    await clock.advance(0)
    assert [v.step for v in transport.progress if v] == ["model round 1"]
    presenter.update(ROUTE, "run_1", "running sleep", 0.2)
    await clock.advance(0.5)
    assert len(transport.progress) == 1, "not more often than min_gap_s"
    await clock.advance(0.5)
    assert [v.step for v in transport.progress if v][-1] == "running sleep"
    await clock.advance(1.0)
    await clock.advance(3.0)
    steps = [v for v in transport.progress if v]
    assert len(steps) == 3 and steps[-1].elapsed_s == 5.0, "refreshed while nothing changes"
    await presenter.note("run_1", "(your message reached the agent)")
    await clock.advance(1.0)
    assert transport.progress[-1] is not None and transport.progress[-1].note
    await presenter.finish("run_1")
    await clock.advance(0)
    assert transport.progress[-1] is None, "cleared when the turn ends"


# -- pacing after a Retry-After, groups, and progress on worse terms than replies ----------

MESSAGES = frozenset({Call.POST, Call.EDIT})
TELEGRAM_LIKE = Pacing(
    max_chars=4096,
    rules=(
        Rule(MESSAGES, Scope.CHANNEL, 1, 1.0),
        Rule(MESSAGES, Scope.GROUP, 20, 60.0),
        Rule(MESSAGES, Scope.ACCOUNT, 1, 0.25, limit=False),
        Rule(frozenset(Call), Scope.ACCOUNT, 8, 1.0),
    ),
    group_prefix="-",
)


async def run_for(clock: ManualClock, seconds: float, step: float = 0.05) -> None:
    for _ in range(round(seconds / step)):
        await clock.advance(step)


def took(limiter: RateLimiter, route: Route, call: Call) -> bool:
    """Progress made this call (at once answered), if the limiter had room for it."""
    ticket = limiter.take(route, call)
    if ticket is not None:
        ticket.done()
    return ticket is not None


def windows_hold(times: list[float], count: int, per_s: float) -> bool:
    """No `per_s` window holds more than `count` of these times."""
    times = sorted(times)
    return all(times[i + count] - times[i] >= per_s - 1e-6 for i in range(len(times) - count))


async def test_after_a_retry_after_the_backlog_does_not_go_at_once() -> None:
    """A chat's 429 holds back the chat for the whole Retry-After and the bot's shared windows
    for their length; then the chat's one a second and the bot's spread still hold, also for
    sends that were already waiting for their turn when the 429 came."""
    clock = ManualClock()
    limiter = RateLimiter(clock, TELEGRAM_LIKE)
    start = clock.monotonic()
    sent: list[tuple[str, float]] = []

    async def send(key: str) -> None:
        (await limiter.acquire(chat(key))).done()
        sent.append((key, clock.monotonic() - start))

    await send("a")  # goes at once; Telegram answers 429, retry after 3 s
    limiter.back_off(chat("a"), Call.POST, 3.0)
    tasks = [asyncio.create_task(send(k)) for k in ("a", "a", "a", "b", "c", "b")]
    await run_for(clock, 10.0)
    await asyncio.gather(*tasks)
    after = sent[1:]
    assert all(t >= 3.0 for k, t in after if k == "a"), "not to the chat before the wait passed"
    assert all(t >= 1.0 for _, t in after), "nor anywhere before the bot's windows moved on"
    times = [t for _, t in after]
    assert windows_hold(times, 1, 0.25), "then one every 0.25 s, not all at once"
    for key in "abc":
        assert windows_hold([t for k, t in sent if k == key], 1, 1.0), f"chat {key}: 1/s"


async def test_a_group_gets_twenty_messages_a_minute_and_progress_leaves_replies_half() -> None:
    clock = ManualClock()
    limiter = RateLimiter(clock, TELEGRAM_LIKE)
    group, start = chat("-100"), clock.monotonic()
    replies: list[float] = []
    edits: list[float] = []

    async def reply() -> None:
        (await limiter.acquire(group)).done()
        replies.append(clock.monotonic() - start)

    for _ in range(30):  # progress edits every 0.5 s for 30 s, before the replies come
        if took(limiter, group, Call.EDIT):
            edits.append(clock.monotonic() - start)
        await run_for(clock, 0.5)
    assert 0 < len(edits) <= 10, "progress takes at most half of the group's minute"
    assert windows_hold(edits, 1, 6.0 - 1e-6), "and spreads it out"
    tasks = [asyncio.create_task(reply()) for _ in range(25)]
    await run_for(clock, 120.0, step=0.25)
    await asyncio.gather(*tasks)
    assert windows_hold(edits + replies, 20, 60.0), "20 a minute in a group, all told"
    assert windows_hold(replies, 1, 1.0)
    assert sum(t < 60 for t in replies) >= 10, "the replies had the half progress left them"


async def test_progress_never_waits_and_never_goes_before_a_waiting_reply() -> None:
    clock = ManualClock()
    limiter = RateLimiter(clock, TELEGRAM_LIKE)
    (await limiter.acquire(chat("1"))).done()
    waiting = asyncio.create_task(limiter.acquire(chat("1")))  # the next part of a reply
    await clock.advance(0.5)
    assert not took(limiter, chat("1"), Call.EDIT), "the chat's second is the reply's"
    await clock.advance(0.6)
    assert waiting.done()
    in_flight = waiting.result()
    await clock.advance(1.5)
    assert not took(limiter, chat("1"), Call.EDIT), "the reply is not answered yet"
    in_flight.done()
    assert not took(limiter, chat("1"), Call.EDIT), "one a second from its answer"
    assert took(limiter, chat("1"), Call.INDICATOR), "typing counts only in the bot's 8/s"
    await clock.advance(1.0)
    assert took(limiter, chat("1"), Call.EDIT)
    limiter.back_off(chat("1"), Call.EDIT, 5.0)  # an edit answered 429
    await clock.advance(2.0)
    assert not took(limiter, chat("1"), Call.EDIT)
    assert limiter.ready_at(chat("1"), Call.EDIT) == clock.monotonic() + 3.0


class BudgetedTransport(RecordingTransport):
    """Shows progress as an adapter does: each call only if the bridge's budget has room."""

    def __init__(self, limits: TransportLimits) -> None:
        super().__init__(limits=limits)
        self.calls: list[tuple[Call, str | None]] = []
        self.shown: dict[str, str] = {}

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        key = route.conversation_key
        if view is None:
            if key in self.shown and budget.take(Call.DELETE):
                del self.shown[key]
                self.calls.append((Call.DELETE, None))
            return
        if budget.take(Call.INDICATOR):
            self.calls.append((Call.INDICATOR, None))
        call = Call.EDIT if key in self.shown else Call.POST
        if self.shown.get(key) != view.step and budget.take(call):
            self.shown[key] = view.step
            self.calls.append((call, view.step))


async def test_progress_is_coalesced_when_the_budget_is_tight() -> None:
    """Edits limited to 6 a minute; the step changes every 0.3 s: what is shown is the newest
    state once there is room, never a queue of old ones, and the clear comes last."""
    clock = ManualClock()
    limits = Pacing(max_chars=4096, rules=(Rule(frozenset({Call.EDIT}), Scope.ACCOUNT, 6, 60.0),))
    transport = BudgetedTransport(limits)
    platforms = Platforms(clock)
    platforms.attach(transport)
    presenter = ProgressPresenter(platforms, clock, interval_s=4.0, min_gap_s=1.0)
    for i in range(100):
        presenter.update(ROUTE, "run_1", f"step {i}", 0.0)
        await clock.advance(0.3)
    edits = [step for call, step in transport.calls if call is Call.EDIT]
    assert 3 <= len(edits) <= 6, "within the budget"
    assert len(edits) == len(set(edits)), "no state shown twice"
    await presenter.finish("run_1")
    await run_for(clock, 1.0)
    assert transport.calls[-1] == (Call.DELETE, None)
    await presenter.close()


async def test_a_turns_progress_is_cleared_before_the_next_turn_here_shows_its_own() -> None:
    clock = ManualClock()
    limits = Pacing(max_chars=4096, rules=(Rule(frozenset({Call.DELETE}), Scope.ACCOUNT, 1, 5.0),))
    transport = BudgetedTransport(limits)
    platforms = Platforms(clock)
    platforms.attach(transport)
    presenter = ProgressPresenter(platforms, clock, interval_s=4.0, min_gap_s=1.0)
    assert took(platforms.pacer(TELEGRAM.name), ROUTE, Call.DELETE)  # the budget is used
    presenter.update(ROUTE, "run_1", "first", 0.0)
    await clock.advance(0)
    await presenter.finish("run_1")
    presenter.update(ROUTE, "run_2", "second", 0.0)
    await run_for(clock, 3.0)
    assert [c for c, _ in transport.calls if c is not Call.INDICATOR] == [Call.POST]
    await run_for(clock, 3.0)
    assert [c for c, _ in transport.calls if c is not Call.INDICATOR] == [
        Call.POST,
        Call.DELETE,
        Call.POST,
    ], "the first turn's message went once the budget had room, then the second's came"
    await presenter.close()
