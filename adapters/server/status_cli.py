"""`switchboard status`, read from the store by another process than the one running: first
whether Switchboard runs (the SQLite file's lock, held by the running process with its pid
inside; on PostgreSQL the `active` lease), then what each active session does (each by its
name, `bridge/session_names.py`: never its id), deliveries and
undelivered notifications, in the words `/status` and the console use (`bridge/activity.py`,
`bridge/texts.py`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

from adapters.server.pairing_cli import pairing_lines
from adapters.server.reloading import holder
from adapters.server.workspace_leases import WORKSPACE
from bridge import texts
from bridge.activity import (
    Activity,
    ActivityReader,
    agent_name,
    duration,
    plain_error,
    workspace_of,
)
from bridge.health import kept_lines
from bridge.places import place
from bridge.session_names import ordered
from bridge.status import undelivered_notifications
from bridge.store.health import HealthStore
from bridge.store.pairing import PairingStore
from bridge.store.records import ConversationName, Intent
from bridge.store.schema import MIGRATIONS as BRIDGE_MIGRATIONS
from bridge.store.store import BridgeStore
from bridge.types import DeliveryStatus
from config.schema import SwitchboardConfig
from config.timing import zone
from runtime.homes import REPLICA as REPLICA_LEASE
from runtime.records import Lease
from runtime.store.store import Store

RUNNING = "Switchboard is running: {who} on {where}, since {since} ({ago} ago)."
RUNNING_REPLICA = "Switchboard is running: replica {holder} is active on {where} (lease {left})."
NOT_RUNNING = (
    "Switchboard is not running: no process has {where} open. What it left goes on at the "
    "next `switchboard run`."
)
NOT_RUNNING_REPLICA = (
    "Switchboard is not running: no replica holds the active lease on {where}{last}. What it "
    "left goes on once one runs."
)
LEASE_LEFT = "renewed, {left:.0f} s left"
LAST_HOLDER = " (replica {holder} let it go {ago} ago)"
SESSIONS = "Workspace {workspace}{served}: {active} of {count} session(s) active."
SERVED_BY = " (its bots on replica {holder})"
NOT_SERVED = " (its bots on no replica yet)"
NOTHING_RUNS = "  Nothing running."
LAST_ERROR = "      last error: {error}"
DELIVERIES = "Deliveries: {counts}."
NO_DELIVERIES = "Deliveries: none yet."
FAILED_DELIVERY = "  Failed: the {kind} to {where}: {error}"
UNDELIVERED = "  Undelivered notifications: {count}"
UNDELIVERED_NONE = "  Undelivered notifications: none."
UNDELIVERED_LINE = "    - {summary} (from {agent}; {status})"
NO_DATABASE = "Switchboard is not running, and has not run here yet: no database at {path}."
RECEIVED = "Received, not yet handled: {count}{oldest}."
RECEIVED_OLDEST = " (the oldest {ago} ago)"
LEASE = "Lease {name}: held by {holder} (fence {fence}), {state}."
REPLICA = "Replica {name}: running {held} session(s), lease {state}."
ON_REPLICA = " (on replica {holder})"
UNSET = "Not set here, and not needed to read the status: {names}."


def no_database(config: SwitchboardConfig) -> str | None:
    """What to say when there is nothing to read (the command creates no database)."""
    if not config.storage.shared and not Path(config.storage.path).exists():
        return NO_DATABASE.format(path=config.storage.path)
    return None


def status_command(config: SwitchboardConfig, unset: Sequence[str] = ()) -> int:
    """`unset`: the variables the config names that this environment lacks (tokens and keys
    that reading the store does not use), said last."""
    print(no_database(config) or asyncio.run(status(config)))
    if unset:
        print(UNSET.format(names=", ".join(unset)))
    return 0


async def status(config: SwitchboardConfig) -> str:
    store = await Store.open(
        config.storage.location, extra_migrations={"bridge": BRIDGE_MIGRATIONS}, exclusive=False
    )
    bridge_store = BridgeStore(store)
    try:
        now = store.clock.wall()
        leases = await store.leases.all()
        if config.storage.shared:  # lease times are the database's clock
            await store.leases.align()
            running, line = _fleet(config, leases, store.leases.now())
            held = await store.leases.sessions_held()
            lines = [line, *lease_lines(leases, held, store.leases.now())]
        else:
            running, line = _one(config, now)
            lines = [line]
        records = ordered(await store.sessions())
        lines.append(_deliveries(await bridge_store.delivery_counts()))
        names = await bridge_store.conversation_names()
        serving = served_by(leases, store.leases.now()) if config.storage.shared else None
        for w in config.workspaces:
            # each session by its name, its times in the workspace's timezone
            reader = ActivityReader(store, bridge_store, running=running, tz=zone(w.timezone))
            mine = await reader.read([r for r in records if workspace_of(r.agent_id) == w.id])
            holders = await store.leases.holders([a.session_id for a in mine if a.active])
            lines += _sessions(w.id, mine, holders, now, serving)
            failed = await bridge_store.workspace_deliveries(w.id)
            lines += _failed(failed, names)
            kept = [(h.words, h.checked_at) for h in await HealthStore(store).of(w.id)]
            lines += kept_lines(kept, running, now, duration)
            lines += await _undelivered(store, bridge_store, w.id)
        lines += await pairing_lines(PairingStore(store), now)
        lines += await inbox_lines(config, now)
        return "\n".join(lines)
    finally:
        await store.close()


def _one(config: SwitchboardConfig, now: float) -> tuple[bool, str]:
    """Whether a process runs the SQLite file: it holds the file's lock while it does."""
    where = config.storage.described
    pid = holder(config.storage.path)
    if pid is None:
        return False, NOT_RUNNING.format(where=where)
    since = Path(f"{config.storage.path}.lock").stat().st_mtime  # written when it took the lock
    who = f"process {pid}" if pid else "a process"
    shown = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since))
    return True, RUNNING.format(who=who, where=where, since=shown, ago=duration(now - since))


def _fleet(config: SwitchboardConfig, leases: Sequence[Lease], now: float) -> tuple[bool, str]:
    """Whether a replica runs the PostgreSQL database: one holds the `active` lease."""
    where = config.storage.described
    active = next((lease for lease in leases if lease.name == "active"), None)
    if active is not None and active.expires_at > now:
        left = LEASE_LEFT.format(left=active.expires_at - now)
        return True, RUNNING_REPLICA.format(holder=active.holder, where=where, left=left)
    last = (
        LAST_HOLDER.format(holder=active.holder, ago=duration(now - active.expires_at))
        if active is not None and active.expires_at > 0
        else ""
    )
    return False, NOT_RUNNING_REPLICA.format(where=where, last=last)


def served_by(leases: Sequence[Lease], now: float) -> dict[str, str]:
    """The replica whose lease runs each workspace's bots now, by workspace."""
    return {
        lease.name.removeprefix(WORKSPACE): lease.holder
        for lease in leases
        if lease.name.startswith(WORKSPACE) and lease.expires_at >= now
    }


def _sessions(
    workspace_id: str,
    activities: Sequence[Activity],
    holders: dict[str, str],
    now: float,
    serving: dict[str, str] | None,
) -> list[str]:
    """Each active session, and on replicas which one runs it (`holders`, by session) and
    which one runs the workspace's bots (`serving`, by workspace)."""
    active = [a for a in activities if a.active]
    served = ""
    if serving is not None:
        holder = serving.get(workspace_id)
        served = SERVED_BY.format(holder=holder) if holder else NOT_SERVED
    lines = [
        SESSIONS.format(
            workspace=workspace_id, served=served, active=len(active), count=len(activities)
        )
    ]
    if not active:
        return [*lines, NOTHING_RUNS]
    for a in active:
        holder = holders.get(a.session_id)
        lines.append(f"  - {a.line(now)}{ON_REPLICA.format(holder=holder) if holder else ''}")
        if a.last_error:
            lines.append(LAST_ERROR.format(error=a.last_error))
    return lines


def _deliveries(counts: dict[DeliveryStatus, int]) -> str:
    if not counts:
        return NO_DELIVERIES
    shown = ", ".join(f"{n} {texts.DELIVERY_STATUS_WORDS[s]}" for s, n in counts.items())
    return DELIVERIES.format(counts=shown)


def _failed(intents: Sequence[Intent], names: dict[str, ConversationName]) -> list[str]:
    return [
        FAILED_DELIVERY.format(
            kind=texts.DELIVERY_KIND_WORDS[i.kind],
            where=place(i.route.conversation_key, names).where,
            error=plain_error(i.last_error) or texts.DELIVERY_STATUS_WORDS[i.status],
        )
        for i in intents
        if i.status is DeliveryStatus.FAILED
    ]


async def _undelivered(store: Store, bridge_store: BridgeStore, workspace_id: str) -> list[str]:
    undelivered = await undelivered_notifications(store, bridge_store, workspace_id)
    if not undelivered:
        return [UNDELIVERED_NONE]
    return [UNDELIVERED.format(count=len(undelivered))] + [
        UNDELIVERED_LINE.format(
            summary=u.summary, agent=agent_name(u.requested_by_agent_id), status=u.words
        )
        for u in undelivered
    ]


async def inbox_lines(config: SwitchboardConfig, now: float) -> list[str]:
    """What the door process received and stored that the main process has not handled
    yet (Slack and Telegram requests: `intake.py`)."""
    from adapters.intake.inbox import InboxReader, inbox_path

    path = inbox_path(Path(config.storage.path))
    if config.storage.shared or not path.exists():
        return []
    inbox = InboxReader(path)
    try:
        count, oldest = await inbox.backlog()
    finally:
        inbox.close()
    since = RECEIVED_OLDEST.format(ago=duration(now - oldest)) if oldest is not None else ""
    return [RECEIVED.format(count=count or "none", oldest=since if count else "")]


def lease_lines(leases: Sequence[Lease], held: dict[str, int], now: float) -> list[str]:
    """Which replica holds which lease (PostgreSQL), and how many sessions each live replica
    runs (`held`, by replica)."""
    lines = []
    for lease in leases:
        left = lease.expires_at - now
        state = f"expires in {left:.1f} s" if left >= 0 else f"expired {-left:.1f} s ago (free)"
        if lease.name.startswith(WORKSPACE):
            continue  # said with its workspace's sessions
        if lease.name.startswith(REPLICA_LEASE):
            if left >= 0:
                name = lease.name.removeprefix(REPLICA_LEASE)
                lines.append(REPLICA.format(name=name, held=held.get(name, 0), state=state))
            continue
        lines.append(
            LEASE.format(name=lease.name, holder=lease.holder, fence=lease.fence, state=state)
        )
    return lines
