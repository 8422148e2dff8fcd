"""A workspace's live board, the console's first screen: what runs now (each session in
words), what waits for whom (tool calls for an operator's approval, pairing requests, queued
messages) and what failed (today's failed turns, failed deliveries, undelivered
notifications), each with its error in words."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, tzinfo
from enum import StrEnum

from bridge import texts
from bridge.activity import (
    Activity,
    ActivityReader,
    Doing,
    agent_name,
    plain_error,
    workspace_of,
)
from bridge.places import place
from bridge.service import Bridge
from bridge.session_names import ordered
from bridge.status import undelivered_notifications
from bridge.store.pairing import PairingStore
from bridge.types import DeliveryKind, DeliveryStatus
from config.timing import zone
from runtime.records import RunStatus

DAY_S = 86_400.0


class Ref(StrEnum):
    """What a board line links to (the console makes the link)."""

    SESSION = "session"
    APPROVALS = "approvals"
    PAIRING = "pairing"
    DELIVERIES = "deliveries"
    NOTIFICATIONS = "notifications"


@dataclass(frozen=True, slots=True)
class Waiting:
    """Something that waits for someone: `what` waits for `whom`, since `since`."""

    what: str
    whom: str
    since: float
    ref: Ref
    ref_id: str = ""


@dataclass(frozen=True, slots=True)
class Failure:
    """Something that failed: `what`, `error` in words, `at` when."""

    what: str
    error: str
    at: float
    ref: Ref
    ref_id: str = ""


@dataclass(frozen=True, slots=True)
class Board:
    workspace_id: str
    now: float  # wall time of the read
    # every session of the workspace: conversations as they began, each's current session
    # first, child agents after their parent (`session_names.ordered`)
    sessions: list[Activity]
    waiting: list[Waiting]
    failures: list[Failure]  # newest first

    @property
    def running(self) -> list[Activity]:
        return [a for a in self.sessions if a.active]

    @property
    def busy(self) -> bool:
        """Something runs or waits: its durations change each second."""
        return bool(self.running or self.waiting)


async def read_board(bridge: Bridge, workspace_id: str) -> Board:
    runtime = bridge.runtime
    store = runtime.store
    now = runtime.clock.wall()
    records = ordered(
        s.record
        for s in runtime.sessions.values()
        if workspace_of(s.record.agent_id) == workspace_id
    )
    sessions = await ActivityReader(
        store, bridge.store, tz=workspace_zone(bridge, workspace_id)
    ).read(records)
    waiting = _approvals(sessions) + await _pairings(bridge, workspace_id, now) + _queued(sessions)
    failures = await _failed_turns(bridge, sessions, now)
    failures += await _failed_deliveries(bridge, workspace_id)
    failures += await _undelivered(bridge, workspace_id)
    failures.sort(key=lambda f: f.at, reverse=True)
    return Board(workspace_id, now, sessions, waiting, failures)


def workspace_zone(bridge: Bridge, workspace_id: str) -> tzinfo:
    """The workspace's timezone (the times in its sessions' names), UTC if it is gone."""
    for w in bridge.config.workspaces:
        if w.id == workspace_id:
            return zone(w.timezone)
    return UTC


def _approvals(sessions: list[Activity]) -> list[Waiting]:
    return [
        Waiting(
            texts.BOARD_APPROVAL.format(tool=a.tool, agent=a.agent, where=a.name),
            a.who or texts.BOARD_ANY_OPERATOR,
            a.since or 0.0,
            Ref.APPROVALS,
        )
        for a in sessions
        if a.doing is Doing.AWAITING_APPROVAL
    ]


async def _pairings(bridge: Bridge, workspace_id: str, now: float) -> list[Waiting]:
    pending = await PairingStore(bridge.runtime.store).pending(now)
    return [
        Waiting(
            texts.BOARD_PAIRING.format(
                who=r.sender_name or r.sender_id, platform=r.platform.capitalize()
            ),
            texts.BOARD_OPERATORS_OF.format(workspace=workspace_id),
            r.created_at,
            Ref.PAIRING,
        )
        for r in pending
        if r.workspace_id == workspace_id
    ]


def _queued(sessions: list[Activity]) -> list[Waiting]:
    return [
        Waiting(
            texts.BOARD_QUEUED.format(count=a.queued, agent=a.agent, where=a.name),
            texts.BOARD_BEHIND_TURN if a.run_id else texts.BOARD_NEXT_TURN,
            a.since or 0.0,
            Ref.SESSION,
            a.session_id,
        )
        for a in sessions
        if a.queued
    ]


async def _failed_turns(bridge: Bridge, sessions: list[Activity], now: float) -> list[Failure]:
    """Turns that failed since midnight (UTC, as the console shows times)."""
    by_id = {a.session_id: a for a in sessions}
    midnight = now - now % DAY_S
    return [
        Failure(
            texts.BOARD_FAILED_TURN.format(agent=a.agent, where=a.name),
            plain_error(run.error) or texts.RUN_STATUS_WORDS[run.status],
            run.finished_at or run.started_at,
            Ref.SESSION,
            a.session_id,
        )
        for run in await bridge.runtime.store.runs(status=RunStatus.FAILED)
        if (a := by_id.get(run.session_id)) is not None
        and (run.finished_at or run.started_at) >= midnight
    ]


async def _failed_deliveries(bridge: Bridge, workspace_id: str) -> list[Failure]:
    names = bridge.sessions.names()
    return [
        Failure(
            texts.BOARD_FAILED_DELIVERY.format(
                kind=texts.DELIVERY_KIND_WORDS[i.kind],
                where=place(i.route.conversation_key, names).where,
            ),
            plain_error(i.last_error) or texts.DELIVERY_STATUS_WORDS[i.status],
            i.updated_at,
            Ref.DELIVERIES,
            i.id,
        )
        for i in await bridge.store.workspace_deliveries(workspace_id)
        # a notification's is listed as an undelivered notification, to be sent elsewhere
        if i.status is DeliveryStatus.FAILED and i.kind is not DeliveryKind.NOTIFICATION
    ]


async def _undelivered(bridge: Bridge, workspace_id: str) -> list[Failure]:
    found = await undelivered_notifications(bridge.runtime.store, bridge.store, workspace_id)
    return [
        Failure(
            texts.BOARD_UNDELIVERED.format(
                summary=u.summary, agent=agent_name(u.requested_by_agent_id)
            ),
            u.words,
            u.created_at,
            Ref.NOTIFICATIONS,
            u.notification_id,
        )
        for u in found
    ]
