"""What GET /metrics shows, through prometheus-client: counters bumped where things happen,
gauges an operator alerts on, and the process's own metrics. One registry per `Metrics` (so
one per Bridge), never the library's global one: a process, or a test, may run several.

Gauges whose truth lives in the database or the runtime (running turns, queue depth, the
outbox backlog, the providers' health) are read at scrape time by `scrape`; the platform
gauges are set by the adapters' wiring as connections start and stop and as platform calls
succeed."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

from bridge.connections import Connections
from bridge.gauges import Work, work_by_workspace
from bridge.provider_health import chains as provider_chains
from bridge.provider_metrics import ProviderCollector
from bridge.spend.metrics import UsageCollector
from bridge.store.store import BridgeStore
from bridge.types import OPEN_DELIVERY
from runtime.engine import Runtime
from runtime.messages import QueueStatus

TURN_BUCKETS = (0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600)
OFFERED_BUCKETS = (0, 1, 2, 3, 4, 5)  # runtime/recall.py offers at most 5 a turn
OFFERED_TOKEN_BUCKETS = (0, 50, 100, 200, 300, 400, 500, 750, 1000)  # at most ~2,000 chars


class LabelledCounter:
    """A counter bumped with its labels as keywords: `deliveries.inc(status="failed")`."""

    def __init__(
        self, name: str, documentation: str, labels: tuple[str, ...], registry: CollectorRegistry
    ) -> None:
        self._counter = Counter(name, documentation, labels, registry=registry)

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        self._counter.labels(**labels).inc(amount)


class Metrics:
    def __init__(
        self, workspaces: Iterable[str] = (), *, wall: Callable[[], float] = time.time
    ) -> None:
        self._workspaces = tuple(workspaces)
        self._wall = wall
        self._platforms: set[tuple[str, str]] = set()
        self.connections = Connections(wall)  # the same facts, with errors, for the console
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        r = self.registry
        self.usage = UsageCollector()  # tokens and dollars, summed from the store
        r.register(self.usage)
        self.providers = ProviderCollector()  # each agent's provider chain, read at scrape
        r.register(self.providers)
        self.messages_in = LabelledCounter(
            "switchboard_messages_in_total",
            "Chat messages received, by workspace and trust.",
            ("workspace", "trust"),
            r,
        )
        self.messages_ignored = LabelledCounter(
            "switchboard_messages_ignored_total",
            "Group and channel messages not addressed to the bot (left unanswered), by "
            "workspace and whether the sender is an operator.",
            ("workspace", "sender"),
            r,
        )
        self.automation_runs = LabelledCounter(
            "switchboard_automation_runs_total",
            "Runs of schedules and triggers, by workspace, kind (schedule, trigger) and outcome: "
            "started or skipped (the previous run still going) when due; completed, quiet (a "
            "heartbeat with nothing to report), failed or stopped when it ends.",
            ("workspace", "kind", "outcome"),
            r,
        )
        self.interjections = LabelledCounter(
            "switchboard_interjections_total",
            "Operator messages admitted into running turns, by boundary.",
            ("boundary",),
            r,
        )
        self.deliveries = LabelledCounter(
            "switchboard_deliveries_total",
            "Delivery intents that ended, by final status.",
            ("status",),
            r,
        )
        self.turn_seconds = Histogram(
            "switchboard_turn_duration_seconds",
            "Wall time of finished turns.",
            buckets=TURN_BUCKETS,
            registry=r,
        )
        self.memories_offered = Histogram(
            "switchboard_memory_offered",
            "Memories offered at the start of each turn of an agent that keeps memory (0: none "
            "matched its first message), by workspace and agent.",
            ("workspace", "agent"),
            buckets=OFFERED_BUCKETS,
            registry=r,
        )
        self.memory_offered_tokens = Histogram(
            "switchboard_memory_offered_tokens",
            "About how many tokens of the request the memories offered at the start of each "
            "turn took: what recall adds to a turn's cost, by workspace and agent.",
            ("workspace", "agent"),
            buckets=OFFERED_TOKEN_BUCKETS,
            registry=r,
        )
        self.turns_running = Gauge(
            "switchboard_turns_running",
            "Turns running now, by workspace.",
            ("workspace",),
            registry=r,
        )
        self.queue_messages = Gauge(
            "switchboard_queue_messages",
            "Messages waiting for a turn (queued) or taken into a running turn (dequeued), "
            "by workspace.",
            ("workspace", "status"),
            registry=r,
        )
        self.outbox_backlog = Gauge(
            "switchboard_outbox_backlog",
            "Outgoing messages the platform has not accepted yet: pending (not started) or "
            "sending (under way or retrying), by platform and workspace.",
            ("platform", "workspace", "status"),
            registry=r,
        )
        self.outbox_oldest_age = Gauge(
            "switchboard_outbox_oldest_pending_age_seconds",
            "Age of the oldest outgoing message still pending or sending (0 when none).",
            ("platform", "workspace"),
            registry=r,
        )
        self.replica_active = Gauge(
            "switchboard_replica_active",
            "1 on the replica that runs the turns (always, on SQLite), 0 on a standby.",
            ("replica",),
            registry=r,
        )
        self.replica_sessions = Gauge(
            "switchboard_replica_sessions",
            "Sessions this replica runs now: those whose lease it holds (PostgreSQL replicas).",
            ("replica",),
            registry=r,
        )
        self.replica_leases_lost = Gauge(
            "switchboard_replica_leases_lost",
            "Session leases this replica lost to another since it started (it was paused, or "
            "cut off from the database, past their expiry).",
            ("replica",),
            registry=r,
        )
        self.lease_expires_in = Gauge(
            "switchboard_lease_expires_in_seconds",
            "Each lease in the database (PostgreSQL replicas): its holder and fencing number, "
            "and the seconds until it runs out (negative: expired, free to take).",
            ("lease", "holder", "fence"),
            registry=r,
        )
        self.platform_up = Gauge(
            "switchboard_platform_up",
            "1 while the adapter's connection (polling, webhook, socket, console input) runs; "
            "0 when it is stopped or failed to start.",
            ("platform", "workspace"),
            registry=r,
        )
        self.platform_last_success = Gauge(
            "switchboard_platform_last_success_timestamp_seconds",
            "Unix time of the last platform call that succeeded (a message accepted, a lookup "
            "answered).",
            ("platform", "workspace"),
            registry=r,
        )

    # -- set as things happen ----------------------------------------------------------

    def connection(self, platform: str, workspace: str, *, up: bool) -> None:
        self._platforms.add((platform, workspace))
        self.platform_up.labels(platform=platform, workspace=workspace).set(1 if up else 0)
        self.connections.state(platform, workspace, up=up)

    def forget_connection(self, platform: str, workspace: str) -> None:
        """The workspace's platform connection is no longer configured (a reload removed
        it): its series go, instead of saying "down" forever."""
        self._platforms.discard((platform, workspace))
        for gauge in (self.platform_up, self.platform_last_success):
            with contextlib.suppress(KeyError):
                gauge.remove(platform, workspace)

    def memory_offered(self, agent_id: str, memories: int, tokens: int) -> None:
        """A turn started with `memories` memories offered, about `tokens` tokens of them (a
        child's turns count as its agent's, as its model calls do)."""
        workspace, _, agent = agent_id.partition("/")
        labels = {"workspace": workspace, "agent": agent.split("/")[0]}
        self.memories_offered.labels(**labels).observe(memories)
        self.memory_offered_tokens.labels(**labels).observe(tokens)

    def set_workspaces(self, workspaces: Iterable[str]) -> None:
        """The workspaces configured now (after a reload): each has its series."""
        self._workspaces = tuple(workspaces)

    def platform_call_ok(self, platform: str, workspace: str) -> None:
        self.platform_last_success.labels(platform=platform, workspace=workspace).set(self._wall())
        self.connections.call_ok(platform, workspace)

    def platform_call_failed(self, platform: str, workspace: str, error: str) -> None:
        """A platform call failed (a send, a poll): the console shows the last error."""
        self.connections.call_failed(platform, workspace, error)

    # -- read at scrape time -----------------------------------------------------------

    async def scrape(self, runtime: Runtime, store: BridgeStore) -> bytes:
        """Refresh the gauges read from the runtime and the database; the exposition text."""
        backlog = await store.outbox_backlog()
        await self.usage.refresh(runtime.store.usage)
        leases = await runtime.store.leases.all()
        now = runtime.clock.wall()  # the clock the outbox stamps its rows with
        work = work_by_workspace(runtime)
        self.providers.refresh(provider_chains(runtime), now)
        # No await from here on: a concurrent scrape never sees a half-refreshed gauge.
        self.turns_running.clear()
        self.queue_messages.clear()
        for workspace in sorted({*self._workspaces, *work}):
            counts = work.get(workspace) or Work()
            self.turns_running.labels(workspace=workspace).set(counts.running)
            for queue, n in (
                (QueueStatus.QUEUED, counts.queued),
                (QueueStatus.DEQUEUED, counts.dequeued),
            ):
                self.queue_messages.labels(workspace=workspace, status=queue).set(n)
        self.lease_expires_in.clear()
        for lease in leases:
            self.lease_expires_in.labels(lease.name, lease.holder, str(lease.fence)).set(
                round(lease.expires_at - runtime.store.leases.now(), 3)  # the database's time
            )
        self.outbox_backlog.clear()
        self.outbox_oldest_age.clear()
        places = self._platforms | {(b.platform, b.workspace) for b in backlog}
        for platform, workspace in sorted(places):
            for status in OPEN_DELIVERY:
                self.outbox_backlog.labels(platform, workspace, status).set(0)
            self.outbox_oldest_age.labels(platform, workspace).set(0)
        oldest: dict[tuple[str, str], float] = {}
        for b in backlog:
            self.outbox_backlog.labels(b.platform, b.workspace, b.status).set(b.count)
            place = (b.platform, b.workspace)
            oldest[place] = min(oldest.get(place, b.oldest_created_at), b.oldest_created_at)
        for (platform, workspace), created_at in oldest.items():
            self.outbox_oldest_age.labels(platform, workspace).set(max(0.0, now - created_at))
        return generate_latest(self.registry)
