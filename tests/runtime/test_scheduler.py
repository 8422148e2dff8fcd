"""The pure scheduling decision, checked over every combination of its inputs."""

from __future__ import annotations

import itertools

from runtime.messages import (
    DropPolicy,
    InboundMessage,
    MessageKind,
    Origin,
    Priority,
    QueueMode,
    Trust,
    may_interject,
)
from runtime.scheduler import DecisionKind, SessionView, collect_wait, decide

MESSAGES = [
    InboundMessage("x", kind=k, origin=o, trust=t, priority=p)
    for k, o, t, p in itertools.product(MessageKind, Origin, Trust, Priority)
]


def test_only_one_combination_may_interject() -> None:
    eligible = [m for m in MESSAGES if may_interject(m)]
    assert len(eligible) == 1
    [m] = eligible
    assert (m.kind, m.origin, m.trust, m.priority) == (
        MessageKind.OPERATOR_PROMPT,
        Origin.OPERATOR,
        Trust.TRUSTED_OPERATOR,
        Priority.INTERJECT,
    )


def test_decisions_for_every_mode_and_message() -> None:
    for mode, running, message in itertools.product(QueueMode, (False, True), MESSAGES):
        view = SessionView(mode, running, backlog=0, cap=10, drop_policy=DropPolicy.OLDEST)
        decision = decide(view, message)
        if not running:
            assert decision.kind is DecisionKind.START_TURN
        elif not may_interject(message):
            assert decision.kind is DecisionKind.QUEUE_FOR_NEXT_TURN
        else:
            assert (
                decision.kind
                is {
                    QueueMode.STEER: DecisionKind.WAIT_FOR_SAFE_POINT,
                    QueueMode.INTERRUPT: DecisionKind.INTERRUPT_RUNNING_TURN,
                    QueueMode.FOLLOWUP: DecisionKind.QUEUE_FOR_NEXT_TURN,
                    QueueMode.COLLECT: DecisionKind.QUEUE_FOR_NEXT_TURN,
                }[mode]
            )
        assert decision.reason


def test_a_full_queue_drops_by_policy() -> None:
    message = MESSAGES[0]
    oldest = decide(SessionView(QueueMode.STEER, True, 5, 5, DropPolicy.OLDEST), message)
    assert oldest.drop_oldest and oldest.kind is not DecisionKind.DROP_NEW
    newest = decide(SessionView(QueueMode.STEER, True, 5, 5, DropPolicy.NEWEST), message)
    assert newest.kind is DecisionKind.DROP_NEW and newest.submit_status == "dropped"


def test_collect_wait() -> None:
    assert collect_wait(last_arrival=10.0, now=10.5, window=2.0) == 1.5
    assert collect_wait(last_arrival=10.0, now=13.0, window=2.0) == 0.0
