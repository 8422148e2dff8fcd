"""The runtime's public face: sessions, submit, stop, status, events.

Each session with work has one worker task that runs its turns one at a time; an idle
session has none. Scheduling decisions come from the pure `scheduler.decide`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from runtime.agents import AgentSpec
from runtime.clock import Clock, SystemClock
from runtime.errors import StaleRunError, UnknownRunError, UnknownSessionError
from runtime.events import Event, EventType
from runtime.messages import (
    DropPolicy,
    InboundMessage,
    MessageKind,
    Origin,
    Priority,
    Provenance,
    QueueEntry,
    QueueMode,
    QueueStatus,
    Trust,
    may_interject,
)
from runtime.notifications import notify_operator
from runtime.prompts import render_turn_input
from runtime.providers.base import Provider
from runtime.records import AgentProfile, RunRecord, RunStatus, SessionRecord
from runtime.recovery import recover
from runtime.scheduler import DecisionKind, SessionView, collect_wait, decide
from runtime.session import RunHandle, Session
from runtime.store import Store
from runtime.tools.command import CommandToolSpec
from runtime.tools.envelope import ToolResult
from runtime.tools.registry import ToolRegistry
from runtime.transcript import TextBlock, TranscriptMessage
from runtime.turn import Turn, TurnDeps, TurnOutcome

log = logging.getLogger(__name__)


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


@dataclass(frozen=True, slots=True)
class RuntimeSettings:
    default_queue_mode: QueueMode = QueueMode.STEER
    queue_cap: int = 100
    drop_policy: DropPolicy = DropPolicy.OLDEST
    collect_window_s: float = 2.0
    max_rounds: int = 50
    max_tokens: int = 4096


@dataclass(frozen=True, slots=True)
class SubmitResult:
    message_id: str
    status: str  # queued | waiting_for_safe_point | interrupting | dropped
    dropped_message_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StopResult:
    status: Literal["stopped", "already_stopped"]
    run_id: str


@dataclass(frozen=True, slots=True)
class SessionStatus:
    session_id: str
    agent_id: str
    profile: AgentProfile
    mode: QueueMode
    state: Literal["idle", "running"]
    run_id: str | None
    step: str | None
    elapsed_s: float | None
    queued: int
    children: tuple[str, ...] = field(default_factory=tuple)


class Runtime:
    def __init__(
        self,
        store: Store,
        provider: Provider,
        agents: Iterable[AgentSpec],
        tools: ToolRegistry,
        settings: RuntimeSettings,
        clock: Clock,
    ) -> None:
        self.store = store
        self.provider = provider
        self.tools = tools
        self.settings = settings
        self.clock = clock
        self._agents = {a.id: a for a in agents}
        self._sessions: dict[str, Session] = {}
        self._closing = False
        self._deps = TurnDeps(
            store,
            provider,
            tools,
            clock,
            settings.max_rounds,
            settings.max_tokens,
            self._notify,
            self._spawn,
        )

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        provider: Provider,
        agents: Iterable[AgentSpec],
        command_tools: Iterable[CommandToolSpec] = (),
        settings: RuntimeSettings | None = None,
        clock: Clock | None = None,
    ) -> Runtime:
        """Open the store, recover what a crash left behind, and resume queued work."""
        clock = clock or SystemClock()
        store = await Store.open(path, clock=clock)
        runtime = cls(
            store,
            provider,
            agents,
            ToolRegistry(command_tools),
            settings or RuntimeSettings(),
            clock,
        )
        await recover(store)
        for record in await store.sessions():
            runtime._adopt(record)
        for entry in await store.messages(statuses=[QueueStatus.QUEUED]):
            session = runtime._sessions[entry.session_id]
            session.queue.push(entry)
        for session in runtime._sessions.values():
            if len(session.queue):
                runtime._ensure_worker(session)
        return runtime

    async def close(self) -> None:
        """Stop workers (running turns resume after the next open) and close the store."""
        self._closing = True
        workers = [s.worker for s in self._sessions.values() if s.worker]
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        await self.store.close()

    # -- sessions ----------------------------------------------------------------------

    def _adopt(self, record: SessionRecord) -> Session:
        if record.agent_id not in self._agents and record.parent_session_id:
            parent = self._sessions[record.parent_session_id]
            self._agents[record.agent_id] = self._agents[parent.record.agent_id].child(
                record.agent_id, self.tools.command_tool_names()
            )
        session = Session(record, self.settings.default_queue_mode)
        self._sessions[record.id] = session
        return session

    def _get(self, session_id: str) -> Session:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise UnknownSessionError(f"no session {session_id!r}") from None

    def has_session(self, session_id: str) -> bool:
        return session_id in self._sessions

    def session(self, session_id: str) -> SessionRecord:
        return self._get(session_id).record

    async def create_session(
        self,
        agent_id: str,
        *,
        session_id: str | None = None,
        queue_mode: QueueMode | None = None,
        metadata: dict[str, Any] | None = None,
        parent_session_id: str | None = None,
    ) -> str:
        if agent_id not in self._agents:
            raise UnknownSessionError(f"no agent {agent_id!r}; known: {sorted(self._agents)}")
        agent = self._agents[agent_id]
        record = SessionRecord(
            id=session_id or new_id("ses"),
            agent_id=agent_id,
            profile=agent.profile,
            created_at=self.clock.wall(),
            parent_session_id=parent_session_id,
            queue_mode=queue_mode,
            metadata=metadata or {},
        )
        async with self.store.write() as w:
            await w.insert_session(record)
            w.emit(
                Event(
                    EventType.SESSION_CREATED,
                    record.id,
                    {
                        "agent_id": agent_id,
                        "profile": record.profile,
                        "parent_session_id": parent_session_id,
                    },
                )
            )
        self._adopt(record)
        return record.id

    async def set_queue_mode(self, session_id: str, mode: QueueMode | None) -> None:
        session = self._get(session_id)
        async with self.store.write() as w:
            await w.set_queue_mode(session_id, mode)
            w.emit(Event(EventType.QUEUE_MODE_CHANGED, session_id, {"mode": mode}))
        session.record.queue_mode = mode
        self._ensure_worker(session)

    def status(self, session_id: str) -> SessionStatus:
        session = self._get(session_id)
        run = session.running
        children = tuple(
            s.id for s in self._sessions.values() if s.record.parent_session_id == session_id
        )
        return SessionStatus(
            session_id=session_id,
            agent_id=session.record.agent_id,
            profile=session.record.profile,
            mode=session.mode,
            state="running" if run else "idle",
            run_id=run.run_id if run else None,
            step=run.step if run else None,
            elapsed_s=round(self.clock.monotonic() - run.started_at, 3) if run else None,
            queued=len(session.queue),
            children=children,
        )

    def events(self, after_seq: int | None = None) -> AsyncIterator[Event]:
        return self.store.feed.subscribe(after_seq)

    async def wait_idle(self, session_id: str | None = None) -> None:
        """Until the session (or every session) has no worker: for tests and the CLI."""
        while True:
            sessions = [self._get(session_id)] if session_id else list(self._sessions.values())
            workers = [s.worker for s in sessions if s.worker]
            if not workers:
                return
            await asyncio.wait(workers)

    # -- submit ------------------------------------------------------------------------

    async def submit(self, session_id: str, message: InboundMessage) -> SubmitResult:
        """Store the message durably, decide its fate, and wake the session's worker."""
        session = self._get(session_id)
        view = SessionView(
            session.mode,
            session.running is not None,
            len(session.queue),
            self.settings.queue_cap,
            self.settings.drop_policy,
        )
        decision = decide(view, message)
        message_id = new_id("msg")
        dropped = session.queue.oldest() if decision.drop_oldest else None
        new_status = (
            QueueStatus.DROPPED if decision.kind is DecisionKind.DROP_NEW else QueueStatus.QUEUED
        )
        async with self.store.write() as w:
            seq = await w.insert_message(message_id, session_id, message, new_status)
            w.emit(
                Event(
                    EventType.MESSAGE_QUEUED,
                    session_id,
                    {
                        "message_id": message_id,
                        "kind": message.kind,
                        "origin": message.origin,
                        "trust": message.trust,
                        "authority_class": message.authority_class,
                        "priority": message.priority,
                        "decision": decision.kind,
                        "reason": decision.reason,
                        "status": decision.submit_status,
                        "sender": message.provenance.sender,
                    },
                )
            )
            if new_status is QueueStatus.DROPPED:
                w.emit(self._drop_event(session_id, message_id, message, decision.reason))
            if dropped is not None:
                await w.set_message_status([dropped.id], QueueStatus.DROPPED)
                w.emit(
                    self._drop_event(
                        session_id,
                        dropped.id,
                        dropped.message,
                        f"queue full ({self.settings.queue_cap}); oldest dropped",
                    )
                )
        if dropped is not None:
            session.queue.remove(dropped)
        result = SubmitResult(message_id, decision.submit_status, (dropped.id,) if dropped else ())
        if new_status is QueueStatus.DROPPED:
            return SubmitResult(message_id, "dropped", (message_id,))
        session.queue.push(
            QueueEntry(message_id, session_id, seq, message, QueueStatus.QUEUED, self.clock.wall())
        )
        session.last_arrival = self.clock.monotonic()
        if may_interject(message):
            session.signal_interjection()
        if decision.kind is DecisionKind.INTERRUPT_RUNNING_TURN and session.running:
            session.running.request_stop("interrupted by a new operator message")
        self._ensure_worker(session)
        return result

    @staticmethod
    def _drop_event(
        session_id: str, message_id: str, message: InboundMessage, reason: str
    ) -> Event:
        return Event(
            EventType.MESSAGE_DROPPED,
            session_id,
            {
                "message_id": message_id,
                "reason": reason,
                "sender": message.provenance.sender,
                "reply_route": message.provenance.reply_route,
                "text": message.text[:200],
            },
        )

    # -- stop --------------------------------------------------------------------------

    async def stop(
        self, session_id: str, run_id: str, reason: str = "stopped by the operator"
    ) -> StopResult:
        """Stop the named run: cancel its in-flight request or tools; children stop too."""
        session = self._get(session_id)
        handle = session.running
        if handle is not None and handle.run_id == run_id:
            already = handle.stop_requested
            if not already:
                await self.store.emit(
                    Event(
                        EventType.PROGRESS,
                        session_id,
                        {
                            "state": "cancel_requested",
                            "step": handle.step,
                            "elapsed_s": round(self.clock.monotonic() - handle.started_at, 3),
                        },
                        run_id=run_id,
                    )
                )
                handle.request_stop(reason)
                await asyncio.gather(*(self._stop_child(c) for c in self._children(session)))
            await handle.finished.wait()
            return StopResult("already_stopped" if already else "stopped", run_id)
        run = await self.store.run(run_id)
        if run is None or run.session_id != session_id:
            raise UnknownRunError(f"session {session_id} has no run {run_id!r}")
        if run.status is RunStatus.STOPPED:
            return StopResult("already_stopped", run_id)
        raise StaleRunError(f"run {run_id} already ended ({run.status}); nothing to stop")

    async def _stop_child(self, child: Session) -> None:
        if child.running is not None:
            child.running.silent_stop = True
            await self.stop(child.id, child.running.run_id, "its parent agent was stopped")

    def _children(self, session: Session) -> list[Session]:
        return [s for s in self._sessions.values() if s.record.parent_session_id == session.id]

    # -- the worker --------------------------------------------------------------------

    def _ensure_worker(self, session: Session) -> None:
        if session.worker is None and len(session.queue) and not self._closing:
            session.worker = asyncio.get_running_loop().create_task(
                self._work(session), name=f"session-{session.id}"
            )

    async def _work(self, session: Session) -> None:
        try:
            while True:
                if session.mode is QueueMode.COLLECT:
                    wait = collect_wait(
                        session.last_arrival, self.clock.monotonic(), self.settings.collect_window_s
                    )
                    if wait > 0:
                        await self.clock.sleep(wait)
                        continue
                    entries = session.queue.pop_all()
                else:
                    first = session.queue.pop_next()
                    entries = [first] if first else []
                if not entries:
                    return
                await self._run_turn(session, entries)
        finally:
            session.worker = None

    async def _run_turn(self, session: Session, entries: list[QueueEntry]) -> None:
        agent = self._agents[session.record.agent_id]
        handle = RunHandle(new_id("run"), self.clock.monotonic(), [e.id for e in entries])
        session.running = handle
        try:
            transcript = await self.store.transcript(session.id)
            fresh = [e for e in entries if e.id not in transcript.message_ids]
            row = TranscriptMessage(role="user", blocks=[TextBlock(text=render_turn_input(fresh))])
            async with self.store.write() as w:
                await w.set_message_status(
                    handle.message_ids, QueueStatus.DEQUEUED, run_id=handle.run_id
                )
                await w.insert_run(
                    RunRecord(
                        handle.run_id,
                        session.id,
                        RunStatus.RUNNING,
                        self.provider.model,
                        self.clock.wall(),
                    )
                )
                if fresh:
                    await w.append_transcript(session.id, handle.run_id, row, [e.id for e in fresh])
                w.emit(
                    Event(
                        EventType.TURN_STARTED,
                        session.id,
                        {
                            "message_ids": handle.message_ids,
                            "model": self.provider.model,
                            "mode": session.mode,
                            "resumed": len(fresh) < len(entries),
                        },
                        run_id=handle.run_id,
                    )
                )
        except BaseException:
            session.running = None
            session.queue.push_front(entries)
            raise
        if fresh:
            transcript.rows.append(row)
            transcript.message_ids.update(e.id for e in fresh)
        try:
            outcome = await Turn(self._deps, session, agent, handle, transcript).run()
        except asyncio.CancelledError:
            raise  # shutdown: the run stays "running" and is recovered on the next open
        except Exception as exc:
            log.exception("turn crashed", extra={"session_id": session.id, "run_id": handle.run_id})
            outcome = TurnOutcome(RunStatus.FAILED, "", f"internal error: {exc!r}")
        finally:
            session.running = None
        await self._finish_run(session, handle, outcome)

    async def _finish_run(self, session: Session, handle: RunHandle, outcome: TurnOutcome) -> None:
        message_status = (
            QueueStatus.ABORTED if outcome.status is RunStatus.STOPPED else QueueStatus.PROCESSED
        )
        elapsed = round(self.clock.monotonic() - handle.started_at, 3)
        try:
            async with self.store.write() as w:
                await w.finish_run(handle.run_id, outcome.status, outcome.final_text, outcome.error)
                await w.set_message_status(handle.message_ids, message_status)
                w.emit(
                    Event(
                        EventType.TURN_FINISHED,
                        session.id,
                        {
                            "outcome": outcome.status,
                            "final_text": outcome.final_text,
                            "error": outcome.error,
                            "duration_s": elapsed,
                            "message_ids": handle.message_ids,
                        },
                        run_id=handle.run_id,
                    )
                )
        finally:
            handle.finished.set()
        parent_id = session.record.parent_session_id
        if parent_id and not handle.silent_stop and parent_id in self._sessions:
            await self._report_to_parent(session, handle.run_id, outcome)

    async def _report_to_parent(self, child: Session, run_id: str, outcome: TurnOutcome) -> None:
        text = outcome.final_text or f"(the task ended {outcome.status}: {outcome.error})"
        await self.submit(
            child.record.parent_session_id or "",
            InboundMessage(
                text=text,
                kind=MessageKind.TASK_RESULT,
                origin=Origin.TASK,
                trust=Trust.TRUSTED_SYSTEM,
                priority=Priority.NEXT,
                provenance=Provenance(sender=child.record.agent_id, causation_id=run_id),
            ),
        )

    # -- tool effects ------------------------------------------------------------------

    async def _notify(self, session: Session, run_id: str, message: str) -> ToolResult:
        parent_id = session.record.parent_session_id
        parent = self._sessions.get(parent_id) if parent_id else None
        return await notify_operator(self.store, session, parent, run_id, message)

    async def _spawn(self, parent: Session, run_id: str, task: str) -> ToolResult:
        if not task.strip():
            return ToolResult.failure("invalid_input", "spawn_agent needs a non-empty task")
        if parent.record.profile is AgentProfile.PRIVATE_CHILD:
            return ToolResult.failure("not_allowed", "a child agent cannot spawn agents")
        number = len(self._children(parent)) + 1
        child_agent = f"{parent.record.agent_id}/child-{number}"
        self._agents[child_agent] = self._agents[parent.record.agent_id].child(
            child_agent, self.tools.command_tool_names()
        )
        child_id = await self.create_session(
            child_agent, parent_session_id=parent.id, metadata={"spawned_by_run": run_id}
        )
        async with self.store.write() as w:
            w.emit(
                Event(
                    EventType.CHILD_SPAWNED,
                    parent.id,
                    {"child_session_id": child_id, "child_agent_id": child_agent, "task": task},
                    run_id=run_id,
                )
            )
        await self.submit(
            child_id,
            InboundMessage(
                text=task,
                kind=MessageKind.TASK_REQUEST,
                origin=Origin.SYSTEM,
                trust=Trust.TRUSTED_SYSTEM,
                priority=Priority.NORMAL,
                provenance=Provenance(sender=parent.record.agent_id, causation_id=run_id),
            ),
        )
        return ToolResult.success(
            f"started child agent {child_agent}; its result will come back as a message",
            {"child_session_id": child_id, "child_agent_id": child_agent},
        )
