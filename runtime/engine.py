"""The runtime's public face: sessions, submit, stop, status, events.

Each session with work has one worker task that runs its turns one at a time; an idle
session has none. Scheduling decisions come from the pure `scheduler.decide`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from config.secrets import Secrets
from runtime.admission import Admitting, admit, store_arrival
from runtime.agents import AgentSpec, limits_by_owner
from runtime.approvals import Approvals
from runtime.children import Spawning
from runtime.clock import Clock, SystemClock
from runtime.context import learned_budget
from runtime.errors import UnknownSessionError
from runtime.events import Event
from runtime.guards import HeldTurns
from runtime.homes import Homes
from runtime.ids import new_id
from runtime.memory import Memories
from runtime.memory_flush import flush_on_leaving, keeps_memory
from runtime.messages import InboundMessage, QueueMode, QueueStatus
from runtime.models import Models
from runtime.payloads import QueueModeChanged, SessionCreated
from runtime.providers.base import Provider
from runtime.providers.fallback import Chain
from runtime.records import SessionRecord
from runtime.recovery import recover
from runtime.results import (
    CompactStatus,
    RuntimeSettings,
    SessionStatus,
    StopResult,
    SubmitResult,
)
from runtime.roster import reconfigured
from runtime.session import Session, WarmSessions
from runtime.spend import SpendGate
from runtime.stopping import Stopping, hand_back
from runtime.store.database import Migration
from runtime.store.fencing import fenced_by
from runtime.store.store import Store
from runtime.store.writer import Writer
from runtime.tasks import cancel_and_wait
from runtime.tools.command import CommandToolSpec
from runtime.tools.mcp import McpTools
from runtime.tools.registry import ToolRegistry
from runtime.turn_wiring import turn_deps_of
from runtime.wakeups import Alarm
from runtime.worker import request_compaction, work

log = logging.getLogger(__name__)


class Runtime:
    def __init__(
        self,
        store: Store,
        provider: Provider,
        agents: Iterable[AgentSpec],
        tools: ToolRegistry,
        settings: RuntimeSettings,
        clock: Clock,
        chains: Mapping[str, Chain] | None = None,
    ) -> None:
        self.store = store
        self.provider = provider
        self.models = Models(provider, chains)  # each agent's chain, else `provider`
        self.tools = tools
        self.settings = settings
        self.clock = clock
        self.agents = {a.id: a for a in agents}
        self.sessions: dict[str, Session] = {}
        self.warm = WarmSessions(self.sessions)
        self._children: dict[str, list[Session]] = {}  # by parent session id
        self._spawning = Spawning()
        self.closing = False
        self.homes: Homes | None = None  # replicas: the sessions this one runs (`run_homes`)
        self.approvals = Approvals(store, clock)  # operators' answers to tool calls
        self.alarm = Alarm(store, clock, self.submit)  # wake-ups agents asked for
        self.memories = Memories(store, clock)  # what agents keep across sessions
        self.memories.limits = limits_by_owner(self.agents.values())
        self.turn_deps = turn_deps_of(self, tools, self.approvals, self.alarm, self.memories)
        self.held = HeldTurns(self.sessions)  # turns a budget holds (/approve-spend)

    def limit_spend(self, gate: SpendGate) -> None:
        """Ask `gate` before every model call from now on (the bridge's budgets)."""
        self.turn_deps = replace(self.turn_deps, gate=gate)

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        provider: Provider,
        agents: Iterable[AgentSpec],
        chains: Mapping[str, Chain] | None = None,
        command_tools: Iterable[CommandToolSpec] = (),
        mcp_tools: McpTools | None = None,
        settings: RuntimeSettings | None = None,
        clock: Clock | None = None,
        extra_migrations: Mapping[str, Sequence[str | Migration]] | None = None,
        resume: bool = True,
        secrets: Secrets | None = None,
    ) -> Runtime:
        """Open the store, recover what a crash left behind, and resume queued work.
        `extra_migrations` lets the layer above keep its tables in the same database.
        `resume=False` opens the store only (replicas: `run_homes`). `secrets` are masked in
        the ledger and in what the layers above store for people to read. `chains`: the
        ordered providers of the agents whose `chain` names one; the others use `provider`."""
        clock = clock or SystemClock()
        store = await Store.open(
            path, clock=clock, extra_migrations=extra_migrations, secrets=secrets
        )
        tools = ToolRegistry(command_tools, mcp_tools)
        runtime = cls(store, provider, agents, tools, settings or RuntimeSettings(), clock, chains)
        budget = runtime.turn_deps.budget  # the window: the provider's own, asked once
        learned = await learned_budget(budget, provider, runtime.settings.context_window)
        runtime.turn_deps = replace(runtime.turn_deps, budget=learned)
        if resume:
            await runtime.resume()
        return runtime

    async def resume(self) -> None:
        """Recover what a crash left, load every session, and start their queued work. The MCP
        servers connect first (one try each; one that fails is retried in the background)."""
        await self.tools.mcp.start()
        await recover(self.store)
        for record in await self.store.sessions():
            if record.id not in self.sessions:
                self.adopt(record)
        for entry in await self.store.messages(statuses=[QueueStatus.QUEUED]):
            session = self.sessions[entry.session_id]
            session.queue.push(entry)
        for session in self.sessions.values():
            if len(session.queue):
                self.ensure_worker(session)
        await self.alarm.start()

    async def run_homes(self, holder: str, ttl_s: float, most: int) -> None:
        """Replicas: run the turns of the sessions this one claims (`runtime/homes.py`)."""
        await self.tools.mcp.start()
        self.homes = Homes(self, holder, ttl_s, most)
        await self.homes.start()

    async def hand_back(self, grace_s: float) -> int:
        """The process is stopping: no turn starts; the running ones get up to `grace_s` to
        reach a safe point (`stopping.hand_back`). How many sessions still had work then."""
        self.closing = True
        await self.alarm.stop()
        if self.homes is not None:
            await self.homes.stop()  # nothing more is claimed, heard or admitted here
        cut = await hand_back(self.sessions.values(), grace_s)
        if self.homes is not None:  # what is still under way is cut before others take it
            await cancel_and_wait(*(t for s in self.sessions.values() for t in s.tasks))
            await self.homes.release()
        return cut

    async def stop_workers(self) -> None:
        """Stop every worker (running turns resume at the next open); no turn starts now."""
        self.closing = True
        await self.alarm.stop()
        workers = [t for s in self.sessions.values() for t in s.tasks]
        await cancel_and_wait(*workers)

    async def close(self) -> None:
        """Stop workers (running turns resume at the next open); close the store and models."""
        await self.stop_workers()
        await self.tools.mcp.stop()
        await self.store.close()
        await self.models.close()

    # -- sessions ----------------------------------------------------------------------

    def adopt(self, record: SessionRecord) -> Session:
        if record.agent_id not in self.agents and record.parent_session_id:
            parent = self.sessions[record.parent_session_id]
            self.agents[record.agent_id] = self.agents[parent.record.agent_id].child(
                record.agent_id, self.tools.command_tool_names()
            )
        session = Session(record, self.settings.default_queue_mode)
        self.sessions[record.id] = session
        if record.parent_session_id is not None:
            self._children.setdefault(record.parent_session_id, []).append(session)
        return session

    def reconfigure(
        self, agents: Iterable[AgentSpec], command_tools: Iterable[CommandToolSpec]
    ) -> None:
        """Replace the configured agents and command tools (a config reload). A running turn
        keeps the agent and tools it started with; queued work of an agent no longer
        configured waits for it (`worker.work`), and starts here when it is back."""
        # a bad tool raises before anything changes; the MCP servers stay connected
        tools = ToolRegistry(command_tools, self.tools.mcp)
        self.agents = reconfigured(self.agents, agents)
        self.memories.limits = limits_by_owner(self.agents.values())
        self.models.reset()  # a key refused until a reload is tried again
        self.tools = tools
        self.turn_deps = replace(self.turn_deps, tools=tools)
        for session in self.sessions.values():
            self.ensure_worker(session)

    def _get(self, session_id: str) -> Session:
        try:
            return self.sessions[session_id]
        except KeyError:
            raise UnknownSessionError(f"no session {session_id!r}") from None

    def session(self, session_id: str) -> SessionRecord:
        return self._get(session_id).record

    async def known(self, session_id: str) -> SessionRecord | None:
        """The session, one another replica created known here from now on (None: none)."""
        if session_id not in self.sessions:
            if (record := await self.store.session(session_id)) is None:
                return None
            if record.parent_session_id is not None:
                await self.known(record.parent_session_id)  # a child is adopted after it
            if session_id not in self.sessions:  # not adopted meanwhile
                self.adopt(record)
        return self.sessions[session_id].record

    async def create_session(
        self,
        agent_id: str,
        *,
        session_id: str | None = None,
        queue_mode: QueueMode | None = None,
        metadata: dict[str, Any] | None = None,
        parent_session_id: str | None = None,
        also: Callable[[Writer, str], None] | None = None,
    ) -> str:
        """A new session of `agent_id`; `also(writer, session_id)` adds the caller's own
        records to its transaction (the bridge binds its conversation there)."""
        if agent_id not in self.agents:
            raise UnknownSessionError(f"no agent {agent_id!r}; known: {sorted(self.agents)}")
        agent = self.agents[agent_id]
        record = SessionRecord(
            id=session_id or new_id("ses"),
            agent_id=agent_id,
            profile=agent.profile,
            created_at=self.clock.wall(),
            parent_session_id=parent_session_id,
            queue_mode=queue_mode,
            metadata=metadata or {},
        )
        created = SessionCreated(
            agent_id=agent_id, profile=record.profile, parent_session_id=parent_session_id
        )
        async with self.store.write() as w:
            w.insert_session(record)
            w.emit(Event(created, record.id))
            if self.homes is not None:
                self.homes.claim_new(w, record.id)
            if also is not None:
                also(w, record.id)
        self.adopt(record)
        return record.id

    async def create_child_session(self, parent: Session, run_id: str) -> Session:
        """A private child agent of `parent`'s agent, numbered among its children."""
        with self._spawning.number(parent.id, len(self.children(parent))) as number:
            child_agent = f"{parent.record.agent_id}/child-{number}"
            self.agents[child_agent] = self.agents[parent.record.agent_id].child(
                child_agent, self.tools.command_tool_names()
            )
            child_id = await self.create_session(
                child_agent, parent_session_id=parent.id, metadata={"spawned_by_run": run_id}
            )
        return self.sessions[child_id]

    async def set_queue_mode(self, session_id: str, mode: QueueMode | None) -> None:
        session = self._get(session_id)
        async with self.store.write() as w:
            w.set_queue_mode(session_id, mode)
            w.emit(Event(QueueModeChanged(mode=mode), session_id))
        session.record.queue_mode = mode
        self.ensure_worker(session)

    def status(self, session_id: str) -> SessionStatus:
        session = self._get(session_id)
        children = tuple(c.id for c in self.children(session))
        return session.status(self.clock.monotonic(), children, self.turn_deps.budget.window)

    def events(self, after_seq: int | None = None) -> AsyncIterator[Event]:
        return self.store.feed.subscribe(after_seq)

    def busy(self) -> bool:
        """Whether any session has work queued or running."""
        return any(s.tasks for s in self.sessions.values())

    async def wait_idle(self, session_id: str | None = None) -> None:
        """Until the session (or every session) has no work under way: for tests and the CLI."""

        def working() -> list[asyncio.Task[None]]:  # children started meanwhile too
            sessions = [self._get(session_id)] if session_id else list(self.sessions.values())
            return [t for s in sessions for t in s.tasks]

        while workers := working():
            await asyncio.wait(workers)

    # -- submit ------------------------------------------------------------------------

    async def submit(
        self,
        session_id: str,
        message: InboundMessage,
        also: Callable[[Writer, str], None] | None = None,
        files: Mapping[str, bytes] | None = None,
    ) -> SubmitResult:
        """Store the message durably, decide its fate, and wake the session's worker.

        `also(writer, message_id)` adds the caller's own records to the same transaction
        (the bridge marks the platform's message id as seen there, so a crash can neither
        lose the message nor let a platform retry enqueue it twice). `files` holds the bytes
        of each of `message.attachments`, by id; they are stored in that transaction too."""
        session = self._get(session_id)
        lease = self.homes.lease(session_id) if self.homes is not None else None
        if self.homes is not None and lease is None:  # another replica runs it, or none yet
            return await store_arrival(self.store, session_id, message, also, files)
        async with session.admission:
            with fenced_by(lease):
                return await admit(self.admitting, session, message, also, files)

    @property
    def admitting(self) -> Admitting:
        return Admitting(self.store, self.clock, self.settings, self.ensure_worker)

    # -- stop --------------------------------------------------------------------------

    async def stop(
        self, session_id: str, run_id: str, reason: str = "stopped by the operator"
    ) -> StopResult:
        """Stop the named run: cancel its in-flight request or tools; children stop too."""
        session = self._get(session_id)
        if self.homes is not None and self.homes.lease(session_id) is None:
            return await self.homes.across.stop_elsewhere(session, run_id, reason)
        elsewhere = self.homes.across.stop_elsewhere if self.homes is not None else None
        stopping = Stopping(self.store, self.clock, self.children, elsewhere)
        return await stopping.stop(session, run_id, reason)

    def children(self, session: Session) -> list[Session]:
        return list(self._children.get(session.id, ()))

    async def cancel_wakeups(self, session_id: str, by: str, *, retire: bool = False) -> int:
        """Cancel the session's wake-ups, pending and queued: how many (/stop; /new, `retire`)."""
        session = self._get(session_id)
        if self.homes is not None and not await self.homes.hold(session_id):
            return await self.homes.across.cancel_wakeups_elsewhere(session, by, retire)
        return await self.alarm.cancel_session(session, by, retire=retire)

    # -- between turns: compaction on demand, leaving a session ------------------------

    def compact(self, session_id: str) -> CompactStatus:
        """Summarize the earlier conversation now (/compact): at a turn's next step, or at once."""
        if self.homes is not None and self.homes.lease(session_id) is None:
            return self.homes.across.compact_elsewhere(self._get(session_id))
        return self._as_session(session_id).run(request_compaction, self, self._get(session_id))

    def leave(self, session_id: str) -> bool:
        """/new: the agent keeps what should last of the session, in the background (recalls
        wait for it); then where it stood in its fallback is forgotten. False: no memory."""
        session = self._get(session_id)
        if self.homes is not None and self.homes.lease(session_id) is None:  # done there
            return self.homes.across.leave_elsewhere(session, keeps_memory(self, session))
        if not (flushing := self._as_session(session_id).run(flush_on_leaving, self, session)):
            self.models.forget(session_id)
        return flushing

    def _as_session(self, session_id: str) -> contextvars.Context:
        """Where the session's own work starts (its tasks inherit it): fenced by its lease
        alone, whatever asked for it (a workspace's replay is fenced by the workspace's)."""
        return self.homes.context(session_id) if self.homes else contextvars.copy_context()

    # -- the worker --------------------------------------------------------------------

    def ensure_worker(self, session: Session) -> None:
        if session.worker is None and len(session.queue) and not self.closing:
            homes = self.homes
            if homes is not None and homes.lease(session.id) is None:
                return  # another replica runs it
            session.worker = asyncio.get_running_loop().create_task(
                work(self, session),
                name=f"session-{session.id}",
                context=homes.context(session.id) if homes is not None else None,
            )
