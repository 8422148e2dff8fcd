"""Pacing every call to a platform, on the injectable clock (DESIGN §3, Delivery and Progress).

Each platform's rules (`Pacing`, from its adapter) are sliding windows: at most N calls in
any T seconds, per channel, per group or per bot account. A call counts from when it started
until it is answered, and from then on from its answer, so a request slow to arrive cannot
bring two arrivals closer than a window allows. A reply waits until every window it counts in
has room: first its own chat's (and group's); then, in line with the account's other replies
in the order they got there, the account's shared windows and its spread. Only the head of
the line waits on those, and it goes the moment they have room, so no slot of the spread is
held for a reply that cannot use it when it comes (such a slot used to go by unused, the
replies behind it not moving up). After a Retry-After, its chat waits all of it, the bot's
shared windows at most their own length (see `back_off`), and then the windows still hold,
so a backlog does not go out at once, whether it was waiting already or not.

Progress shares the windows but never waits: it takes a call only when no reply waits for the
same window and (in a window of several) at most half of it is used, so a reply is never
queued behind progress. The cost to a reply is at most one interval of a one-at-a-time window
(Telegram's one message a second in a chat) after a progress edit that had just gone.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager

from bridge.transport import Call, Pacing, Rule, Scope
from bridge.types import Route, TransportLimits
from runtime.clock import Clock

_EPSILON = 1e-9
# In a window this long (a minute), what progress repeats (edits, typing, status lines) is
# spread out evenly, rather than its share used up in a burst and then nothing shown until the
# window moves on.
SPREAD_OVER_S = 10.0
REPEATED = frozenset({Call.EDIT, Call.INDICATOR, Call.STREAM})
SWEEP_EVERY = 1000  # calls
IN_FLIGHT_AT_MOST_S = 60.0  # longer than any request takes: a ticket never done stops counting
_Bucket = tuple[int, str]  # (rule index, what it counts: a channel, a group, an account)


def rules_of(limits: TransportLimits) -> tuple[Rule, ...]:
    """The adapter's rules, or, for plain limits, one post a conversation interval and an
    even spread of every call at the global rate."""
    if isinstance(limits, Pacing) and limits.rules:
        return limits.rules
    rules = []
    if limits.per_conversation_interval_s > 0:
        rules.append(
            Rule(
                frozenset({Call.POST, Call.EDIT}),
                Scope.CHANNEL,
                1,
                limits.per_conversation_interval_s,
            )
        )
    if limits.global_per_second > 0:
        rules.append(
            Rule(frozenset(Call), Scope.ACCOUNT, 1, 1.0 / limits.global_per_second, limit=False)
        )
    return tuple(rules)


class _Mark:
    """One call in a window: when it started, then (once done) when its answer came back.
    While `live` (in flight, under a platform's limit) it counts as made just now."""

    __slots__ = ("at", "live")

    def __init__(self, at: float, live: bool) -> None:
        self.at = at
        self.live = live


class Ticket:
    """A call the pacer let go. `done()` once it has been answered: from then on it counts
    from that moment, so a request slow to arrive cannot bring two arrivals closer than a
    window allows (the platform counts arrivals; we only see starts and answers)."""

    __slots__ = ("_limiter", "_marks")

    def __init__(self, limiter: RateLimiter, marks: list[tuple[_Bucket, _Mark, bool]]) -> None:
        self._limiter = limiter
        self._marks = marks  # (bucket, mark, whether it is a platform's limit)

    def done(self) -> None:
        self._limiter._done(self._marks)

    def cancel(self) -> None:
        """Not made after all: it counts nowhere."""
        self._limiter._cancel(self._marks)

    def joined(self, other: Ticket) -> Ticket:
        return Ticket(self._limiter, self._marks + other._marks)


class RateLimiter:
    def __init__(self, clock: Clock, limits: TransportLimits) -> None:
        self._clock = clock
        self._rules = rules_of(limits)
        self._group_prefix = limits.group_prefix if isinstance(limits, Pacing) else None
        self._sent: dict[_Bucket, deque[_Mark]] = {}  # the calls in each window, oldest first
        self._blocked: dict[_Bucket, float] = {}  # Retry-After: nothing here until then
        self._waiting: Counter[_Bucket] = Counter()  # replies waiting for room here
        self._lines: dict[tuple[_Bucket, ...], deque[asyncio.Future[None]]] = {}
        self._until_sweep = SWEEP_EVERY

    async def acquire(self, route: Route, call: Call = Call.POST) -> Ticket:
        """Wait until this call fits every window it counts in; it is counted from then.
        First its own chat's and group's windows; then, in line with the account's other
        calls that share its spread, in the order they got there, the account's windows and
        the spread. The head of the line leaves it, for the back, if its own chat has been
        taken meanwhile (another thread of it, or a Retry-After), so it holds up no one."""
        buckets = list(self._buckets(route, call))
        own = [(b, r) for b, r in buckets if r.scope is not Scope.ACCOUNT and not _is_spread(r)]
        line = tuple(b for b, r in buckets if _is_spread(r))
        self._waiting.update(b for b, _ in buckets)
        try:
            while True:
                await self._until_room(own)
                if not line:
                    now = self._clock.monotonic()
                    at = self._ready_at(buckets, now, None)
                    if at <= now + _EPSILON:
                        return self._record(buckets, now)
                    await self._clock.sleep(at - now)
                    continue
                async with self._in_line(line):
                    while True:
                        now = self._clock.monotonic()
                        if self._ready_at(own, now, None) > now + _EPSILON:
                            break  # its chat was taken: out of line, back to waiting for it
                        at = self._ready_at(buckets, now, None)
                        if at <= now + _EPSILON:
                            return self._record(buckets, now)
                        await self._clock.sleep(at - now)
        finally:
            self._waiting.subtract(b for b, _ in buckets)
            self._waiting += Counter()  # drop the zeros

    async def _until_room(self, windows: list[tuple[_Bucket, Rule]]) -> None:
        while True:
            now = self._clock.monotonic()
            at = self._ready_at(windows, now, None)
            if at <= now + _EPSILON:
                return
            await self._clock.sleep(at - now)

    @asynccontextmanager
    async def _in_line(self, key: tuple[_Bucket, ...]) -> AsyncIterator[None]:
        """Until this call is at the head of its line; it leaves the line on the way out."""
        line = self._lines.setdefault(key, deque())
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if not line:
            turn.set_result(None)
        line.append(turn)
        try:
            await turn
            yield
        finally:
            was_head = line[0] is turn
            line.remove(turn)
            if was_head and line and not line[0].done():
                line[0].set_result(None)
            if not line:
                del self._lines[key]

    def take(self, route: Route, call: Call) -> Ticket | None:
        """For progress: this call now, if it fits without delaying any reply; else None."""
        buckets = list(self._buckets(route, call))
        now = self._clock.monotonic()
        if any(self._waiting[b] for b, _ in buckets):
            return None
        if self._ready_at(buckets, now, call) > now + _EPSILON:
            return None
        return self._record(buckets, now)

    def ready_at(self, route: Route, call: Call) -> float:
        """When progress may next make this call, as far as the windows tell now."""
        now = self._clock.monotonic()
        return self._ready_at(list(self._buckets(route, call)), now, call)

    def back_off(self, route: Route, call: Call, seconds: float) -> None:
        """The platform said wait (Retry-After): nothing more to this call's chat (and group)
        until then; nothing in a window this call shares with the bot's other chats for as
        long as that window is, at most (the 429 may have been its flood, and a flood of a
        window is over once the window has moved on)."""
        now = self._clock.monotonic()
        for bucket, rule in self._buckets(route, call):
            wait = min(seconds, rule.per_s) if rule.scope is Scope.ACCOUNT else seconds
            self._blocked[bucket] = max(self._blocked.get(bucket, 0.0), now + wait)

    def _buckets(self, route: Route, call: Call) -> Iterator[tuple[_Bucket, Rule]]:
        for index, rule in enumerate(self._rules):
            if call not in rule.calls:
                continue
            if rule.scope is Scope.ACCOUNT:
                key = f"{route.platform}:{route.workspace_id}"
            elif rule.scope is Scope.CHANNEL or (
                self._group_prefix and route.conversation_id.startswith(self._group_prefix)
            ):
                key = route.channel_key
            else:
                continue  # a group rule, and this channel is not a group
            yield (index, key), rule

    def _ready_at(
        self, buckets: list[tuple[_Bucket, Rule]], now: float, progress: Call | None
    ) -> float:
        """When one more call fits every bucket: a reply's (`progress` None), or progress's,
        on its terms."""
        at = now
        for bucket, rule in buckets:
            blocked = self._blocked.get(bucket)
            if blocked is not None:
                if blocked <= now:
                    del self._blocked[bucket]
                at = max(at, blocked)
            room = rule.count - (_reserve(rule) if progress is not None else 0)
            if room <= 0:
                return math.inf
            if not self._prune(bucket, rule, now):
                continue
            times = sorted(_counted_at(m, now) for m in self._sent[bucket])
            if len(times) >= room:
                at = max(at, times[len(times) - room] + rule.per_s)
            # Not all of its share at once; but in a quiet window (a group where only the
            # progress message went), a streamed answer's first words go as soon as the other
            # windows allow.
            quiet = progress is Call.STREAM and len(times) < room // 4
            if (
                progress in REPEATED
                and rule.count > 1
                and rule.per_s >= SPREAD_OVER_S
                and not quiet
            ):
                at = max(at, times[-1] + rule.per_s / room)
        return at

    def _prune(self, bucket: _Bucket, rule: Rule, now: float) -> bool:
        """Forget the calls that have left this window; whether any are left."""
        sent = self._sent.get(bucket)
        while sent and _counted_at(sent[0], now) <= now - rule.per_s:
            sent.popleft()
        if sent:
            return True
        self._sent.pop(bucket, None)
        return False

    def _sweep(self) -> None:
        """Now and then, forget quiet chats' windows and past Retry-Afters."""
        now = self._clock.monotonic()
        for bucket in list(self._sent):
            self._prune(bucket, self._rules[bucket[0]], now)
        for bucket, until in list(self._blocked.items()):
            if until <= now:
                del self._blocked[bucket]

    def _record(self, buckets: list[tuple[_Bucket, Rule]], at: float) -> Ticket:
        self._until_sweep -= 1
        if self._until_sweep <= 0:
            self._until_sweep = SWEEP_EVERY
            self._sweep()
        marks = []
        for bucket, rule in buckets:
            mark = _Mark(at, live=rule.limit)
            self._sent.setdefault(bucket, deque()).append(mark)
            marks.append((bucket, mark, rule.limit))
        return Ticket(self, marks)

    def _cancel(self, marks: list[tuple[_Bucket, _Mark, bool]]) -> None:
        for bucket, mark, _ in marks:
            sent = self._sent.get(bucket)
            if sent is not None and mark in sent:
                sent.remove(mark)

    def _done(self, marks: list[tuple[_Bucket, _Mark, bool]]) -> None:
        now = self._clock.monotonic()
        for bucket, mark, limit in marks:
            if not limit:
                continue  # a spread of our own counts from the start
            mark.at = max(mark.at, now)
            mark.live = False
            sent = self._sent.get(bucket)
            if sent is not None and len(sent) > 1 and sent[-1] is not mark:
                self._sent[bucket] = deque(sorted(sent, key=lambda m: m.at))


def _counted_at(mark: _Mark, now: float) -> float:
    """When a call counts as made: in flight, just now."""
    return min(now, mark.at + IN_FLIGHT_AT_MOST_S) if mark.live else mark.at


def _is_spread(rule: Rule) -> bool:
    """A spread of our own, one call at a time: taken in turn, by reservation."""
    return not rule.limit and rule.count == 1


def _reserve(rule: Rule) -> int:
    """What progress leaves of a window that replies count in too: half of it."""
    return rule.count // 2 if Call.POST in rule.calls and rule.count > 1 else 0


class ProgressBudget:
    """One progress update's budget on one route (see `bridge.transport.Budget`)."""

    def __init__(self, pacer: RateLimiter | None, route: Route) -> None:
        self._pacer = pacer
        self._route = route
        self._taken: list[Ticket] = []
        self.refused: set[Call] = set()  # calls skipped for want of room
        self.on_posted: Callable[[], Awaitable[None]] | None = None  # the presenter's record

    async def posted(self) -> None:
        if self.on_posted is not None:
            await self.on_posted()

    def take(self, call: Call) -> bool:
        if self._pacer is None:
            return True
        ticket = self._pacer.take(self._route, call)
        if ticket is None:
            self.refused.add(call)
            return False
        self._taken.append(ticket)
        return True

    def done(self) -> None:
        """The update has been shown: each call it made counts from now (see `Ticket`)."""
        for ticket in self._taken:
            ticket.done()
        self._taken.clear()

    def back_off(self, call: Call, seconds: float) -> None:
        if self._pacer is not None:
            self._pacer.back_off(self._route, call, seconds)
        self.refused.add(call)

    def ready_at(self, calls: set[Call]) -> float:
        """When all these (skipped) calls may go, as far as the windows tell now."""
        if self._pacer is None:
            return -math.inf
        return max((self._pacer.ready_at(self._route, c) for c in calls), default=-math.inf)
