"""What model calls cost and who pays: each call's usage recorded in the transaction of its
round, and a gate asked before each call whether it may be made (DESIGN §4, budgets).

The runtime knows sessions, runs and payers (the sender of the message that started a turn,
or whoever a wake-up's or a child's turn is charged to); what a payer's limits are is the
bridge's to say, through `SpendGate`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from config.prices import PriceTable
from runtime.providers.base import Usage

log = logging.getLogger(__name__)


class CallPurpose(StrEnum):
    ROUND = "round"  # a turn's model round
    COMPACTION = "compaction"  # summarizing the earlier conversation
    MEMORY_FLUSH = "memory_flush"  # keeping what should last, before compaction


@dataclass(frozen=True, slots=True)
class Charge:
    """Who a call is charged to: the agent (`workspace/agent`) in its session, and the payer
    (an operator id, `schedule ID`, `trigger ID`; None: nobody in particular)."""

    session_id: str
    agent_id: str
    payer: str | None
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class UsageRecord:
    at: float  # wall time
    charge: Charge
    model: str
    purpose: CallPurpose
    usage: Usage
    cost_usd: float
    priced: bool  # False: the model has no price; its cost counts as 0
    provider: str | None = None  # the connection that answered, by its config name


@dataclass(frozen=True, slots=True)
class Spend:
    """What some calls used, summed."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    calls: int = 0

    @property
    def tokens(self) -> int:
        return self.usage.request_tokens + self.usage.output_tokens

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.usage + other.usage, self.cost_usd + other.cost_usd, self.calls + other.calls
        )


_UNPRICED_TOLD: set[str] = set()  # models the log has warned of (once each)


def cost_of(prices: PriceTable, model: str, usage: Usage) -> tuple[float, bool]:
    """Dollars for `usage` of `model`, and whether the model has a price at all (an
    unpriced model's calls count as $0, and the log says so once)."""
    price = prices.of(model)
    if price is None:
        if model not in _UNPRICED_TOLD:
            _UNPRICED_TOLD.add(model)
            log.warning(
                "model has no price: its calls count as $0 (set [provider.prices] for it)",
                extra={"model": model},
            )
        return 0.0, False
    cost = price.cost(
        usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens
    )
    return cost, True


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """A model call a turn is about to make, as the gate sees it."""

    charge: Charge
    model: str
    estimate: Usage  # of this call: its request as estimated, the answer as the largest so far
    approved: bool  # an operator let this turn go past its budgets (/approve-spend)
    approval: int = 0  # which approval of the turn it is (each covers a bounded amount)


class HoldKind(StrEnum):
    WAIT = "wait"  # the turn waits for /approve-spend, a raised limit or the next period
    END = "end"  # the turn ends (a schedule's own limit: the schedule is paused)


@dataclass(frozen=True, slots=True)
class SpendHold:
    """Why a call may not be made now, in words for the operator, and until when."""

    kind: HoldKind
    reason: str
    budget: str  # the limit's key, e.g. `workspace/day`
    until: float | None  # wall time the period ends; None: not by itself


class CallRecording(Protocol):
    """The write transaction a call's usage is recorded in (`runtime.store.Writer`), as a
    gate sees it: a layer's own statement, and what to do once it commits."""

    def write_sql(
        self,
        sql: str,
        params: Sequence[Any] | list[Sequence[Any]] = (),
        *,
        many: bool = False,
        expect: int | None = None,
    ) -> None: ...

    def after_commit(self, callback: Callable[[], None]) -> None: ...


class SpendGate(Protocol):
    """Asked before each model call of a turn. A call let through holds a reservation of
    its estimate until its usage is recorded (`settled`, in that transaction) or the turn
    ends without it (`finished`), so calls at once cannot pass a limit together."""

    async def before_call(self, call: PlannedCall) -> SpendHold | None:
        """None: go ahead (its estimate is reserved)."""
        ...

    def settled(self, w: CallRecording, charge: Charge) -> None:
        """The call's usage is recorded in `w`: its reservation goes in the same commit."""
        ...

    async def finished(self, charge: Charge) -> None:
        """The turn ended: any reservation it still holds (a failed call's) goes."""
        ...


class NoLimits:
    """The gate of a runtime nobody set limits for."""

    async def before_call(self, call: PlannedCall) -> SpendHold | None:
        return None

    def settled(self, w: CallRecording, charge: Charge) -> None:
        return None

    async def finished(self, charge: Charge) -> None:
        return None
