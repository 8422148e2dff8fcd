"""The health of each fallback candidate, by error class: one `Cooldowns` per process, shared
by every session and chain that uses a candidate (runtime/providers/fallback.py).

A candidate is (name, key, model): a second key of the same provider, or another model of
it, has health of its own. What a failure does to it:

- RATE_LIMITED (429): cooling until its Retry-After is over (`rate_limit_s` when the
  provider did not say), then ready;
- OVERLOADED, UNREACHABLE (529, 5xx, no answer, a timeout): the circuit opens for
  `open_s`, doubled on each consecutive failure up to `open_max_s`; then half-open, where
  one request (a probe) is let through: its success closes the circuit, its failure opens
  it again for longer;
- BILLING (402, quota): held for `billing_s` (hours);
- AUTH (401, 403): disabled until `reset()` (a config reload), and `on_disabled` tells the
  admin.

INVALID and CONTEXT say nothing about the candidate's health: they change nothing.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from runtime.clock import Clock
from runtime.errors import Failure, ProviderError
from runtime.providers.base import Provider

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One entry of an agent's ordered list. `name` is its provider entry's ("default" for
    [provider]); `key` labels the API key (`key_label`, never the key); `provider` makes one
    attempt (max_attempts=1); `price` is dollars per million tokens, blended
    (fallback.blended_price; None: unknown); `timeout_s` its attempts' limit (None: the
    chain's). Equal by (name, key, model)."""

    name: str
    key: str
    model: str
    provider: Provider = field(compare=False, repr=False)
    price: float | None = field(default=None, compare=False)
    timeout_s: float | None = field(default=None, compare=False)

    @property
    def identity(self) -> tuple[str, str, str]:
        return (self.name, self.key, self.model)

    @property
    def label(self) -> str:
        """How the progress line, /status and logs name it: "name:model" (a config entry has
        one key: its name tells its key apart)."""
        return f"{self.name}:{self.model}"


def key_label(api_key: str | None) -> str:
    """Which key, without the key: the first 8 hex digits of its SHA-256 ("env" when the
    SDK reads its own environment variable)."""
    if not api_key:
        return "env"
    return hashlib.sha256(api_key.encode()).hexdigest()[:8]


class State(StrEnum):
    READY = "ready"
    COOLING = "cooling"  # rate limited: until its Retry-After is over
    OPEN = "open"  # overloaded or unreachable: no request until `until`
    HALF_OPEN = "half_open"  # one request may go through, as a probe
    HELD = "held"  # billing or quota: for hours
    DISABLED = "disabled"  # its key was refused: until a config reload


USABLE = frozenset({State.READY, State.HALF_OPEN})


@dataclass(frozen=True, slots=True)
class CooldownPolicy:
    rate_limit_s: float = 30.0  # a 429 that did not say how long to wait
    open_s: float = 10.0  # the circuit's first opening
    open_max_s: float = 600.0  # its longest
    billing_s: float = 3 * 3600.0


@dataclass(frozen=True, slots=True)
class Health:
    """A candidate's health as /status, the console and /metrics show it. `until` is wall
    time (epoch seconds), None when the state does not end by itself."""

    candidate: Candidate
    state: State
    until: float | None
    failure: Failure | None  # of the last failure
    last_failure: str | None  # its message
    probing: bool  # a half-open probe is in flight


@dataclass(slots=True)
class _Entry:
    state: State = State.READY
    until: float = 0.0  # monotonic; for COOLING, OPEN and HELD
    opens: int = 0  # consecutive failures that opened the circuit
    probing: bool = False
    failure: Failure | None = None
    last_failure: str | None = None
    failed_at: float | None = None  # monotonic
    answered_at: float | None = None  # the last success, monotonic
    probed_at: float | None = None  # the last probe a turn start sent (fallback.Chain)


DisabledNotice = Callable[[Candidate, ProviderError], None]


class Cooldowns:
    def __init__(
        self,
        clock: Clock,
        policy: CooldownPolicy | None = None,
        on_disabled: DisabledNotice | None = None,
    ) -> None:
        self._clock = clock
        self.policy = policy or CooldownPolicy()
        self._on_disabled = on_disabled
        self._entries: dict[tuple[str, str, str], _Entry] = {}
        self._known: dict[tuple[str, str, str], Candidate] = {}

    def _entry(self, candidate: Candidate) -> _Entry:
        """The candidate's entry, its timed state moved on to what it is now."""
        entry = self._entries.get(candidate.identity)
        if entry is None:
            entry = self._entries[candidate.identity] = _Entry()
            self._known[candidate.identity] = candidate
        timed = entry.state in (State.COOLING, State.OPEN, State.HELD)
        if timed and self._clock.monotonic() >= entry.until:
            entry.state = State.HALF_OPEN if entry.state is State.OPEN else State.READY
        return entry

    def state(self, candidate: Candidate) -> State:
        return self._entry(candidate).state

    def usable(self, candidate: Candidate) -> bool:
        """Whether a request may go to it now (half-open: unless its probe is in flight)."""
        entry = self._entry(candidate)
        return entry.state in USABLE and not entry.probing

    def back_in(self, candidate: Candidate) -> float | None:
        """Seconds until it is usable again by itself: 0 when it is; None when only a
        reload brings it back (disabled) or a probe in flight decides."""
        entry = self._entry(candidate)
        if entry.state in (State.COOLING, State.OPEN, State.HELD):
            return entry.until - self._clock.monotonic()
        return 0.0 if self.usable(candidate) else None

    def acquire(self, candidate: Candidate) -> bool:
        """Take a request for it: False when it is not usable. A half-open candidate's
        request is its probe: no other is let through until `succeeded`, `failed` or
        `release`."""
        entry = self._entry(candidate)
        if entry.state not in USABLE or entry.probing:
            return False
        entry.probing = entry.state is State.HALF_OPEN
        return True

    def release(self, candidate: Candidate) -> None:
        """A request ended without telling its health (cancelled, or the request itself was
        at fault): a half-open candidate takes a probe again."""
        self._entry(candidate).probing = False

    def succeeded(self, candidate: Candidate) -> None:
        entry = self._entry(candidate)
        if entry.state is State.HALF_OPEN:
            log.info("provider circuit closed", extra={"candidate": candidate.label})
        entry.state, entry.opens, entry.probing = State.READY, 0, False
        entry.answered_at = self._clock.monotonic()

    def answered_since_failure(self, candidate: Candidate) -> bool:
        """Whether it has answered a request since its last failure (a session's or a
        probe's): as good as a probe of it."""
        entry = self._entry(candidate)
        if entry.state is not State.READY or entry.answered_at is None:
            return False
        return entry.failed_at is None or entry.answered_at >= entry.failed_at

    def try_probe(self, candidate: Candidate, interval_s: float) -> bool:
        """Whether the caller may send a turn-start probe now: at most one per candidate per
        `interval_s`, whoever asks. Taking it counts as the request (`acquire`)."""
        entry = self._entry(candidate)
        now = self._clock.monotonic()
        if entry.probed_at is not None and now - entry.probed_at < interval_s:
            return False
        if not self.acquire(candidate):
            return False
        entry.probed_at = now
        return True

    def failed(self, candidate: Candidate, error: ProviderError, *, probe: bool = True) -> State:
        """Mark the failure by its class; the state it leaves the candidate in. `probe`: the
        failure is the half-open probe's own (else a request sent before, failing late,
        neither ends another's probe nor counts as the circuit failing again)."""
        entry = self._entry(candidate)
        now, policy = self._clock.monotonic(), self.policy
        was = entry.state
        if probe:
            entry.probing = False
        match error.failure:
            case Failure.RATE_LIMITED:
                wait = error.retry_after if error.retry_after is not None else policy.rate_limit_s
                entry.state, entry.until = State.COOLING, max(entry.until, now + wait)
            case Failure.OVERLOADED | Failure.UNREACHABLE:
                # a request sent before it opened (or before its probe) adds nothing
                late = was is State.OPEN or (was is State.HALF_OPEN and not probe)
                if not late:
                    entry.opens += 1
                    wait = min(policy.open_max_s, policy.open_s * 2 ** (entry.opens - 1))
                    entry.state, entry.until = State.OPEN, now + wait
            case Failure.BILLING:
                entry.state, entry.until = State.HELD, now + policy.billing_s
            case Failure.AUTH:
                entry.state = State.DISABLED
            case _:  # the request's fault, not the candidate's
                return entry.state
        entry.failure, entry.last_failure, entry.failed_at = error.failure, str(error), now
        log.warning(
            "provider candidate marked",
            extra={
                "candidate": candidate.label,
                "state": entry.state.value,
                "failure": error.failure.value,
                "for_s": round(entry.until - now, 3) if entry.until > now else None,
                "error": str(error),
            },
        )
        if entry.state is State.DISABLED and was is not State.DISABLED and self._on_disabled:
            self._on_disabled(candidate, error)
        return entry.state

    def reset(self) -> None:
        """Every candidate ready again (a config reload: its keys may have changed)."""
        self._entries.clear()
        self._known.clear()

    def health(self, candidate: Candidate) -> Health:
        entry = self._entry(candidate)
        timed = entry.state in (State.COOLING, State.OPEN, State.HELD)
        until = self._clock.wall() + (entry.until - self._clock.monotonic()) if timed else None
        return Health(
            candidate, entry.state, until, entry.failure, entry.last_failure, entry.probing
        )

    def snapshot(self) -> list[Health]:
        """Every candidate this process has used, in the order it first did."""
        return [self.health(candidate) for candidate in list(self._known.values())]
