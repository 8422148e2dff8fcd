"""Ordered fallback: an agent's list of candidates, tried in order when one fails.

A `Chain` is one agent's list; `chain.for_session(id)` is the `Provider` a session's turn
calls. Its `complete` goes to the session's current candidate; on a failure that may fall
back (rate limited, overloaded, unreachable, a per-attempt timeout, billing, a refused key) it
marks the candidate (runtime/providers/cooldowns.py) and moves on down the list, skipping
candidates that are not usable and those the cost guard rules out, for at most
`max_attempts` attempts a call. A request's own fault (400, context) and a refusal are the
answer: they never fall back (a refusal that fell back once spent 46.9M metered tokens).

A session that moved stays where it moved (no bouncing): only `turn_starts`, which the turn
calls at its start, returns it to a better candidate, and only one that answered a probe
(or real traffic since it failed). Before moving, `on_retry` is told "falling back from X to
Y: ...": what the failed attempt streamed to `on_text` before it failed is not part of the
answer, and whoever shows the stream must start the answer afresh there (the notice comes
after the failed attempt's last text and before the next attempt's first).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from config.prices import PriceTable
from runtime.errors import Failure, ProviderError
from runtime.providers.base import (
    FALLING_BACK,
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    TextSink,
)
from runtime.providers.cooldowns import Candidate, Cooldowns, Health, State
from runtime.transcript import TextBlock, TranscriptMessage

log = logging.getLogger(__name__)

NEVER_FALLS_BACK = frozenset({Failure.INVALID, Failure.CONTEXT})
# What `on_retry` is told before a call moves on (then ": " and why): the turn's sign that the
# text streamed so far is not the answer and that the progress line should say so.
FALLBACK_NOTICE = FALLING_BACK + "{source} to {target}"
PROBE = TranscriptMessage(role="user", blocks=[TextBlock(text="ping")])

BudgetCheck = Callable[[Candidate], Awaitable[bool]]
INPUT_PER_OUTPUT = 3  # the blend: an agent reads about three tokens for each it writes


def blended_price(prices: PriceTable, model: str) -> float | None:
    """Dollars per million tokens, three input to one output: a candidate's `price`, what
    the cost guard compares. None: the model has no price."""
    price = prices.of(model)
    if price is None:
        return None
    return (INPUT_PER_OUTPUT * price.input + price.output) / (INPUT_PER_OUTPUT + 1)


@dataclass(frozen=True, slots=True)
class FallbackPolicy:
    max_attempts: int = 3  # a call's attempts, over the whole list
    attempt_timeout_s: float = 120.0  # an attempt's silence at most (else its candidate's)
    probe_timeout_s: float = 5.0  # a one-token request; a turn waits on it at its start
    probe_interval_s: float = 60.0  # at most one turn-start probe a candidate this often
    allow_costlier: bool = False  # a candidate dearer than the primary may be used


@dataclass(frozen=True, slots=True)
class ChainSnapshot:
    """For /status, the console and /metrics."""

    candidates: list[Health]
    sessions: dict[str, str]  # session id -> its candidate's label, for sessions off the primary
    switches: dict[tuple[str, str, str], int]  # (from, to, why) -> how many


@dataclass(slots=True)
class _Attempts:
    """What one call tried, for the error that says so when none answered."""

    notes: list[str] = field(default_factory=list)
    last_error: ProviderError | None = None
    left_because: str | None = None  # why the session's candidate was left: a failure, a state
    made: int = 0


class Chain:
    def __init__(
        self,
        candidates: Sequence[Candidate],
        health: Cooldowns,
        policy: FallbackPolicy | None = None,
        window: int | None = None,
    ) -> None:
        if not candidates:
            raise ValueError("a fallback chain needs at least one candidate")
        self.candidates = tuple(candidates)
        self.window = window  # the smallest context window of its models: a turn fits them all
        self.health = health
        self.policy = policy or FallbackPolicy()
        self._current: dict[str, int] = {}  # session id -> index; absent: the primary
        self.switches: Counter[tuple[str, str, str]] = Counter()

    @property
    def primary(self) -> Candidate:
        return self.candidates[0]

    def for_session(
        self,
        session_id: str,
        *,
        cheaper_only: bool = False,
        before_fallback: BudgetCheck | None = None,
    ) -> SessionProvider:
        """The `Provider` a turn of this session calls. `cheaper_only` (schedules,
        heartbeats): no candidate dearer than the primary, nor of unknown price while the
        primary's is known. `before_fallback`: asked before each call of a candidate other
        than the primary (the budget); False stops the call."""
        return SessionProvider(self, session_id, cheaper_only, before_fallback)

    def current(self, session_id: str) -> Candidate:
        return self.candidates[self._current.get(session_id, 0)]

    def forget(self, session_id: str) -> None:
        """The session is gone (closed, /new): it starts on the primary next time."""
        self._current.pop(session_id, None)

    async def turn_starts(self, session_id: str, *, cheaper_only: bool = False) -> Candidate:
        """At a turn's start (never mid-turn): a session on a fallback returns to the best
        candidate above it that the cost guard allows and that answers a probe (or has
        answered anyone since it failed)."""
        at = self._current.get(session_id, 0)
        for index, better in enumerate(self.candidates[:at]):
            if self._costs_too_much(better, cheaper_only) is not None:
                continue
            if self.health.answered_since_failure(better) or await self._probe(better):
                self._move(session_id, at, index, "recovered")
                return better
        return self.candidates[at]

    async def _probe(self, candidate: Candidate) -> bool:
        """A tiny request (max_tokens=1, "ping", no tools), at most one per candidate per
        `probe_interval_s` whoever asks; its outcome marks the candidate like any request."""
        if not self.health.try_probe(candidate, self.policy.probe_interval_s):
            return False
        request = ProviderRequest(candidate.model, "", [PROBE], [], max_tokens=1)
        try:
            async with asyncio.timeout(self.policy.probe_timeout_s):
                await candidate.provider.complete(request, _ignore_text, _ignore_retry)
        except TimeoutError:
            self.health.failed(candidate, _timed_out(candidate, self.policy.probe_timeout_s))
            return False
        except ProviderError as error:
            self.health.failed(candidate, error)  # ends its probe, whatever the failure
            return False
        except BaseException:
            self.health.release(candidate)
            raise
        self.health.succeeded(candidate)
        log.info("provider probe answered", extra={"candidate": candidate.label})
        return True

    def _move(self, session_id: str, from_index: int, to_index: int, why: str) -> None:
        source, target = self.candidates[from_index], self.candidates[to_index]
        if to_index == 0:
            self._current.pop(session_id, None)
        else:
            self._current[session_id] = to_index
        self.switches[(source.label, target.label, why)] += 1
        log.warning(
            "provider switched",
            extra={
                "session_id": session_id,
                "from_candidate": source.label,
                "to_candidate": target.label,
                "why": why,
            },
        )

    def _costs_too_much(self, candidate: Candidate, cheaper_only: bool) -> str | None:
        """Why the cost guard rules the candidate out, or None."""
        primary = self.primary.price
        if candidate is self.primary or primary is None:
            return None
        if candidate.price is None:
            return "price unknown (cheaper only)" if cheaper_only else None
        if candidate.price <= primary:
            return None
        if cheaper_only:
            return "dearer than the primary (cheaper only)"
        return None if self.policy.allow_costlier else "dearer than the primary"

    def _order(self, at: int) -> list[int]:
        """Where a call looks: the session's candidate, those below it, then those above it
        (a failure may send a session up only when nothing below can take the call)."""
        count = len(self.candidates)
        return [*range(at, count), *range(at)]

    def _skip_note(self, candidate: Candidate) -> str:
        health = self.health.health(candidate)
        note = f"{candidate.label} skipped ({health.state.value}"
        back_in = self.health.back_in(candidate)
        if back_in is not None and back_in > 0:
            note += f" for {back_in:.0f} s"
        return note + (f": {health.last_failure})" if health.last_failure else ")")

    def _exhausted(self, tried: _Attempts, cheaper_only: bool) -> ProviderError:
        """The error of a call no candidate answered: what each did, and the soonest back
        (of those the cost guard allows)."""
        soonest: tuple[float, Candidate] | None = None
        for candidate in self.candidates:
            if self._costs_too_much(candidate, cheaper_only) is not None:
                continue
            back_in = self.health.back_in(candidate)
            if back_in is not None and (soonest is None or back_in < soonest[0]):
                soonest = (back_in, candidate)
        message = "no model could answer: " + "; ".join(tried.notes)
        if soonest is not None:
            wall = self.health.health(soonest[1]).until
            if wall is None:  # usable, but this call's attempts ran out or the budget said no
                message += f". Ready now: {soonest[1].label}"
            else:
                at = time.strftime("%H:%M:%S UTC", time.gmtime(wall))
                message += f". Soonest back: {soonest[1].label} at {at} (in {soonest[0]:.0f} s)"
        last = tried.last_error
        return ProviderError(
            message,
            status=last.status if last else None,
            failure=last.failure if last else Failure.UNREACHABLE,
            retryable=soonest is not None,
            retry_after=max(0.0, soonest[0]) if soonest else None,
        )

    def snapshot(self) -> ChainSnapshot:
        return ChainSnapshot(
            [self.health.health(c) for c in self.candidates],
            {sid: self.candidates[at].label for sid, at in self._current.items()},
            dict(self.switches),
        )


class SessionProvider:
    """A session's view of its chain: a `Provider` whose calls go to the session's candidate
    and whose `model` is the one that answered last (at first, the session's candidate when
    the view was made: make one a turn, after `turn_starts`)."""

    def __init__(
        self,
        chain: Chain,
        session_id: str,
        cheaper_only: bool,
        before_fallback: BudgetCheck | None,
    ) -> None:
        self._chain = chain
        self.session_id = session_id
        self._cheaper_only = cheaper_only
        self._before_fallback = before_fallback
        self.model = chain.current(session_id).model

    def checked_by(self, before_fallback: BudgetCheck) -> SessionProvider:
        """This view, with each fallback call asked of `before_fallback` first (a turn's
        spend gate, for the candidate's model)."""
        return SessionProvider(self._chain, self.session_id, self._cheaper_only, before_fallback)

    async def close(self) -> None:
        """The chain's providers are closed once by their owner (`Models.close`)."""

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        chain, tried = self._chain, _Attempts()
        at = chain._current.get(self.session_id, 0)
        source = chain.candidates[at]
        for index in chain._order(at):
            if tried.made >= chain.policy.max_attempts:
                tried.notes.append(f"stopped after {tried.made} attempts")
                break
            candidate = chain.candidates[index]
            ruled_out = self._ruled_out(candidate)
            if ruled_out is not None:
                tried.notes.append(ruled_out)
                if index == at:  # why the session leaves it: its state, else the cost guard
                    state = chain.health.state(candidate)
                    tried.left_because = "cost" if state is State.READY else state.value
                continue
            fallback = candidate is not chain.primary
            if fallback and self._before_fallback and not await self._before_fallback(candidate):
                tried.notes.append(f"{candidate.label} not tried (the budget refused it)")
                break
            probe = chain.health.state(candidate) is State.HALF_OPEN
            if not chain.health.acquire(candidate):  # another session took its probe
                tried.notes.append(chain._skip_note(candidate))
                continue
            if candidate != source:
                why = tried.last_error or tried.notes[-1]
                notice = FALLBACK_NOTICE.format(source=source.label, target=candidate.label)
                on_retry(tried.made, 0.0, f"{notice}: {why}")
            tried.made += 1
            response = await self._attempt(candidate, probe, request, on_text, on_retry, tried)
            if response is not None:
                if index != at:
                    chain._move(self.session_id, at, index, tried.left_because or "skipped")
                self.model = candidate.model
                response.provider = candidate.name
                return response
            source = candidate
        raise chain._exhausted(tried, self._cheaper_only)

    def _ruled_out(self, candidate: Candidate) -> str | None:
        """Why a call may not go to the candidate now (the cost guard, its health), or None."""
        chain = self._chain
        too_dear = chain._costs_too_much(candidate, self._cheaper_only)
        if too_dear is not None:
            return f"{candidate.label} skipped ({too_dear})"
        if not chain.health.usable(candidate):
            return chain._skip_note(candidate)
        return None

    async def _attempt(
        self,
        candidate: Candidate,
        probe: bool,
        request: ProviderRequest,
        on_text: TextSink,
        on_retry: RetryNotice,
        tried: _Attempts,
    ) -> ProviderResponse | None:
        """One attempt, holding the candidate's request (acquired; `probe`: its half-open
        probe); None when it failed in a way that may fall back (marked, and noted in
        `tried`). A refusal is an answer."""
        health = self._chain.health
        timeout_s = candidate.timeout_s or self._chain.policy.attempt_timeout_s
        loop = asyncio.get_running_loop()
        try:
            # A limit on silence, not on the answer: each streamed word moves it on, so a long
            # answer still coming is never cut (a chain of one has nothing to move on to).
            alone = len(self._chain.candidates) == 1
            async with asyncio.timeout(None if alone else timeout_s) as deadline:

                def streamed(delta: str) -> None:
                    if not alone:
                        deadline.reschedule(loop.time() + timeout_s)
                    on_text(delta)

                response = await candidate.provider.complete(
                    replace(request, model=candidate.model), streamed, on_retry
                )
        except TimeoutError:
            error = _timed_out(candidate, timeout_s)
        except ProviderError as exc:
            if exc.failure in NEVER_FALLS_BACK:
                if probe:
                    health.release(candidate)
                raise
            error = exc
        except BaseException:
            if probe:
                health.release(candidate)
            raise
        else:
            health.succeeded(candidate)
            return response
        health.failed(candidate, error, probe=probe)
        tried.notes.append(f"{candidate.label} failed ({error})")
        tried.last_error = error
        tried.left_because = tried.left_because or error.failure.value
        return None


def _timed_out(candidate: Candidate, seconds: float) -> ProviderError:
    return ProviderError(
        f"{candidate.label} did not answer within {seconds:g} s", failure=Failure.UNREACHABLE
    )


def _ignore_text(delta: str) -> None:
    """A probe's answer is not shown."""


def _ignore_retry(attempt: int, delay: float, reason: str) -> None:
    """A probe is not retried."""
