"""Pure scheduling decisions: what happens to a message, given the session's state.

No I/O here. Every decision is recorded in the `message_queued` event.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from runtime.messages import DropPolicy, InboundMessage, QueueMode, may_interject


class DecisionKind(StrEnum):
    START_TURN = "start_turn"
    WAIT_FOR_SAFE_POINT = "wait_for_safe_point"
    QUEUE_FOR_NEXT_TURN = "queue_for_next_turn"
    INTERRUPT_RUNNING_TURN = "interrupt_running_turn"
    DROP_NEW = "drop_new"


class SubmitStatus(StrEnum):
    """What `Runtime.submit` tells its caller happened to the message."""

    QUEUED = "queued"
    WAITING_FOR_SAFE_POINT = "waiting_for_safe_point"
    INTERRUPTING = "interrupting"
    DROPPED = "dropped"


@dataclass(frozen=True, slots=True)
class SessionView:
    mode: QueueMode
    turn_running: bool
    backlog: int
    cap: int
    drop_policy: DropPolicy


@dataclass(frozen=True, slots=True)
class Decision:
    kind: DecisionKind
    reason: str
    drop_oldest: bool = False

    @property
    def submit_status(self) -> SubmitStatus:
        return _SUBMIT_STATUS.get(self.kind, SubmitStatus.QUEUED)


_SUBMIT_STATUS = {
    DecisionKind.WAIT_FOR_SAFE_POINT: SubmitStatus.WAITING_FOR_SAFE_POINT,
    DecisionKind.INTERRUPT_RUNNING_TURN: SubmitStatus.INTERRUPTING,
    DecisionKind.DROP_NEW: SubmitStatus.DROPPED,
}


def decide(view: SessionView, message: InboundMessage) -> Decision:
    drop_oldest = False
    if view.backlog >= view.cap:
        if view.drop_policy is DropPolicy.NEWEST:
            return Decision(DecisionKind.DROP_NEW, f"queue full ({view.cap}); newest dropped")
        drop_oldest = True
    if not view.turn_running:
        return Decision(DecisionKind.START_TURN, "session idle", drop_oldest)
    eligible = may_interject(message)
    if view.mode is QueueMode.STEER and eligible:
        return Decision(
            DecisionKind.WAIT_FOR_SAFE_POINT, "steer: trusted operator prompt", drop_oldest
        )
    if view.mode is QueueMode.INTERRUPT and eligible:
        return Decision(
            DecisionKind.INTERRUPT_RUNNING_TURN, "interrupt: trusted operator prompt", drop_oldest
        )
    reason = (
        f"{view.mode}: waits for the running turn"
        if eligible
        else ("not a trusted operator prompt with interject priority; waits for the next turn")
    )
    return Decision(DecisionKind.QUEUE_FOR_NEXT_TURN, reason, drop_oldest)


def collect_wait(last_arrival: float, now: float, window: float) -> float:
    """Seconds a collect-mode session still waits before merging its backlog into one prompt."""
    return max(0.0, last_arrival + window - now)
