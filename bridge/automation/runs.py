"""A run of a schedule or a trigger: its session (its own, kept between runs, or a fresh one
each time), its message, stored with the run's record in one transaction; and, when the turn
ends, what of its answer reaches chat, under a line that says where it came from.

A schedule's runs never overlap: while its previous run still has a turn running or waiting,
a new one is recorded as skipped (the operator sees it in /schedules). A trigger's events are
never skipped: in its own session they wait their turn, in fresh ones they run side by side."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Literal

from bridge.keyed_locks import KeyedLocks
from bridge.routing import Router
from bridge.sessions import agent_key
from bridge.store.automation import (
    AutomationKind,
    AutomationRun,
    AutomationStore,
    Key,
    RunOutcome,
    keep_session,
    record_run,
)
from bridge.store.store import BridgeStore
from config.automation import HEARTBEAT_OK
from config.schema import WorkspaceConfig
from runtime.engine import Runtime
from runtime.messages import (
    InboundMessage,
    MessageKind,
    Origin,
    Priority,
    Provenance,
    QueueEntry,
    QueueMode,
    Trust,
)
from runtime.records import RunStatus
from runtime.store.writer import Writer

log = logging.getLogger(__name__)

SILENT = "silent"
SURFACES = ("schedule", "heartbeat", "trigger")


@dataclass(frozen=True, slots=True)
class Source:
    """What starts a run: a schedule's or trigger's settings, as its config gives them."""

    kind: AutomationKind
    workspace_id: str
    automation_id: str
    agent: str
    session: Literal["own", "fresh"]
    deliver: str
    max_rounds: int
    heartbeat: bool = False

    @property
    def key(self) -> Key:
        return (self.workspace_id, self.kind, self.automation_id)


@dataclass(frozen=True, slots=True)
class Fire:
    """One run to start: what it says, and its unique key."""

    text: str
    fire_key: str
    slot_at: float
    missed: int = 0


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What `decide_run` needs, read before it."""

    ran: bool  # this fire (a slot, a signed event) ran before
    busy: bool  # the automation's previous run still has a turn running or waiting
    session_id: str | None  # its own session, kept between runs (None: a new one)
    reply_route: dict[str, str] | None  # where its answer goes, when an operator is named
    now: float


@dataclass(frozen=True, slots=True)
class Skip:
    """Not run: `run` records why (None: it ran before, and nothing more is written)."""

    run: AutomationRun | None


@dataclass(frozen=True, slots=True)
class Start:
    """Run: its message, in its session (None: a new one), recorded with `run`."""

    run: AutomationRun
    session_id: str | None
    message: InboundMessage


RunVerdict = Skip | Start


def decide_run(source: Source, fire: Fire, facts: RunFacts) -> RunVerdict:
    """A schedule's runs never overlap; a trigger's events are never skipped."""
    run = AutomationRun(
        source.workspace_id,
        source.kind,
        source.automation_id,
        fire.fire_key,
        fire.slot_at,
        facts.now,
        fire.missed,
        RunOutcome.STARTED,
    )
    if facts.ran:  # a retry of a delivery already run, a slot already run
        return Skip(None)
    if source.kind is AutomationKind.SCHEDULE and facts.busy:
        detail = "the previous run was still going"
        return Skip(replace(run, outcome=RunOutcome.SKIPPED, detail=detail))
    return Start(run, facts.session_id, run_message(source, fire, facts.reply_route))


def run_message(source: Source, fire: Fire, route: dict[str, str] | None) -> InboundMessage:
    surface = "heartbeat" if source.heartbeat else source.kind.value
    trigger = source.kind is AutomationKind.TRIGGER
    return InboundMessage(
        text=fire.text,
        kind=MessageKind.CHANNEL_EVENT if trigger else MessageKind.TIMER_TICK,
        origin=Origin.CHANNEL if trigger else Origin.TIMER,
        trust=Trust.TRUSTED_INTEGRATION if trigger else Trust.TRUSTED_SYSTEM,
        priority=Priority.NORMAL,
        delivery_surface=SILENT if source.deliver == SILENT else "chat",
        max_rounds=source.max_rounds,
        provenance=Provenance(
            sender=f"{source.kind.value} {source.automation_id}",
            surface=surface,
            reply_route=route,
            correlation_id=f"{source.workspace_id}/{source.automation_id}/{fire.fire_key}",
        ),
    )


def label(kind: str, name: str) -> str:
    return f"_From {kind} `{name}`_"


class Runs:
    def __init__(
        self, runtime: Runtime, store: BridgeStore, automation: AutomationStore, router: Router
    ) -> None:
        self._runtime = runtime
        self._store = store
        self._automation = automation
        self._router = router
        self._starting: KeyedLocks[Key] = KeyedLocks()

    async def _busy(self, session_id: str | None) -> bool:
        """The previous run's session still has a turn running or waiting (on any replica)."""
        if session_id is None or await self._runtime.known(session_id) is None:
            return False
        status = self._runtime.status(session_id)
        return status.run_id is not None or status.queued > 0

    async def start(self, source: Source, workspace: WorkspaceConfig, fire: Fire) -> RunOutcome:
        """Start one run of the automation: what it needs read, decided (`decide_run`), then
        written in one transaction with its message. One start of it at a time: whether it
        ran, whether its last run is still going, and its own session are read again by a
        second start (a double-clicked Run now, a run now as its slot fires, two trigger
        events at once) once the first has recorded its run."""
        async with self._starting.hold(source.key):
            facts = await self._read(source, workspace, fire)
            return await self._apply(source, workspace, decide_run(source, fire, facts))

    async def _read(self, source: Source, workspace: WorkspaceConfig, fire: Fire) -> RunFacts:
        """Read from the store, not kept here: on replicas a schedule fires on the active one,
        its run-now and a trigger's events come where the workspace is served."""
        own, latest = await self._automation.sessions_of(source.key)
        if source.session != "own" or (own and await self._runtime.known(own) is None):
            own = None
        route = None
        if source.deliver not in ("primary", SILENT):
            operator = next(o for o in workspace.operators if o.id == source.deliver)
            found = self._router.operator_route(workspace, operator)
            route = found.to_json() if found is not None else None
        return RunFacts(
            ran=await self._automation.ran(source.key, fire.fire_key),
            busy=await self._busy(latest),
            session_id=own,
            reply_route=route,
            now=self._runtime.clock.wall(),
        )

    async def _apply(
        self, source: Source, workspace: WorkspaceConfig, verdict: RunVerdict
    ) -> RunOutcome:
        if isinstance(verdict, Start):
            return await self._begin(source, workspace, verdict)
        if verdict.run is not None:
            async with self._store.write() as tx:
                record_run(tx, verdict.run)
            log.info("scheduled run skipped: %s", verdict.run.detail, extra=_fields(verdict.run))
        return RunOutcome.SKIPPED

    async def _begin(self, source: Source, workspace: WorkspaceConfig, start: Start) -> RunOutcome:
        """The run's message stored with its record (and, in a new session it keeps, that
        session) in the runtime's transaction."""
        run, session_id = start.run, start.session_id
        keep = session_id is None and source.session == "own"
        session_id = session_id or await self._runtime.create_session(
            agent_key(workspace.id, source.agent),
            queue_mode=QueueMode.FOLLOWUP,  # an operator's reply waits for the run to end
            metadata={source.kind.value: source.automation_id},
        )

        def also(w: Writer, message_id: str) -> None:
            tx = self._store.join(w)
            record_run(tx, replace(run, session_id=session_id, message_id=message_id))
            if keep:
                keep_session(tx, source.key, session_id)

        await self._runtime.submit(session_id, start.message, also=also)
        log.info("scheduled run started", extra={**_fields(run), "session_id": session_id})
        return RunOutcome.STARTED


@dataclass(frozen=True, slots=True)
class Answer:
    """What of a run's answer reaches chat (None: nothing), and how the run ended."""

    text: str | None
    outcome: RunOutcome
    post_id: str = ""  # what a reply to it names ("schedule morning-check, 2026-...")
    summary: str = ""  # the answer's own words


def source_label(first: QueueEntry) -> str | None:
    """The line naming the schedule or trigger that started a run (None: something else)."""
    provenance = first.message.provenance
    if provenance.surface not in SURFACES or not provenance.sender:
        return None
    kind, _, name = provenance.sender.partition(" ")
    return label(kind, name)


def answer_of(first: QueueEntry, status: RunStatus, text: str) -> Answer | None:
    """For a turn a schedule or trigger started: the answer under a line naming it; None for
    any other turn. A heartbeat with nothing to report, or a silent run, delivers nothing."""
    started_by = source_label(first)
    if started_by is None:
        return None
    provenance = first.message.provenance
    outcome = {
        RunStatus.COMPLETED: RunOutcome.COMPLETED,
        RunStatus.STOPPED: RunOutcome.STOPPED,
    }.get(status, RunOutcome.FAILED)
    if provenance.surface == "heartbeat" and text.strip().startswith(HEARTBEAT_OK):
        return Answer(None, RunOutcome.QUIET)
    if first.message.delivery_surface == SILENT or not text.strip():
        return Answer(None, outcome)
    key = provenance.correlation_id or first.id
    return Answer(f"{started_by}\n\n{text}", outcome, f"{provenance.sender} {key}", text)


def _fields(run: AutomationRun) -> dict[str, object]:
    return {
        "workspace_id": run.workspace_id,
        "kind": run.kind.value,
        "automation_id": run.automation_id,
        "fire_key": run.fire_key,
    }
