"""A session's worker: takes messages off its queue and runs their turns, one at a time."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from runtime.children import report_to_parent
from runtime.compaction import compact, unguarded
from runtime.events import Event
from runtime.host import Host
from runtime.ids import new_id
from runtime.memory_flush import Idle
from runtime.messages import Origin, QueueEntry, QueueMode, QueueStatus
from runtime.payloads import ProgressState, TurnFinished, TurnStarted, thinking_step
from runtime.prompts import turn_input_row
from runtime.records import RunRecord, RunStatus
from runtime.results import CompactStatus
from runtime.scheduler import collect_wait
from runtime.session import HandedBack, RunHandle, Session
from runtime.spend import CallPurpose
from runtime.tool_round import waiting_round
from runtime.turn import Turn
from runtime.turn_types import TurnOutcome

log = logging.getLogger(__name__)


async def work(rt: Host, session: Session) -> None:
    try:
        while not rt.closing:
            if session.record.agent_id not in rt.agents:  # a reload removed it: work waits
                log.warning(
                    "agent not configured; its queued messages wait",
                    extra={"session_id": session.id, "agent_id": session.record.agent_id},
                )
                return
            if session.mode is QueueMode.COLLECT:
                wait = collect_wait(
                    session.last_arrival, rt.clock.monotonic(), rt.settings.collect_window_s
                )
                if wait > 0:
                    await rt.clock.sleep(wait)
                    continue
                entries = session.queue.pop_all()
            else:
                first = session.queue.pop_next()
                entries = [first] if first else []
            if not entries:
                return
            async with session.turn_lock:  # a compaction between turns finishes first
                if rt.closing:  # the process began to stop meanwhile: they wait for the next
                    session.queue.push_front(entries)
                    return
                await run_turn(rt, session, entries)
    finally:
        session.worker = None


async def run_turn(rt: Host, session: Session, entries: list[QueueEntry]) -> None:
    agent = rt.agents[session.record.agent_id]
    handle = RunHandle(new_id("run"), rt.clock.monotonic(), [e.id for e in entries])
    handle.payer = entries[0].message.provenance.payer  # the first message's pays
    session.running = handle
    try:
        # A turn a clock started (a schedule, a wake-up) falls back to no dearer model.
        cheaper_only = entries[0].message.origin is Origin.TIMER
        provider = await rt.models.for_turn(agent, session.id, cheaper_only=cheaper_only)
        rt.warm.began(session)
        transcript = await rt.store.transcript(session.id, session.history)
        session.history = transcript.after(0, transcript.summary)  # the turn changes its own
        # A message taken into a run before (that run was cut off by a crash) has its prompt
        # in the transcript already: taking it and appending its prompt were one transaction.
        fresh = [e for e in entries if e.run_id is None]
        if await waiting_round(rt.store, transcript):
            # A restart left a round open (a call waits for approval): its results must come
            # right after it, so new prompts wait in the queue for the next turn.
            session.queue.push_front(fresh)
            entries = [e for e in entries if e.run_id is not None]
            handle.message_ids = [e.id for e in entries]
            fresh = []
        handle.resumed = len(fresh) < len(entries)
        handle.first_message = entries[0].message if entries else None
        row = turn_input_row(fresh)
        async with rt.store.write() as w:
            w.set_message_status(handle.message_ids, QueueStatus.DEQUEUED, run_id=handle.run_id)
            w.insert_run(
                RunRecord(
                    handle.run_id,
                    session.id,
                    RunStatus.RUNNING,
                    provider.model,
                    rt.clock.wall(),
                    payer=handle.payer,
                )
            )
            row_id = (
                w.append_transcript(session.id, handle.run_id, row, [e.id for e in fresh])
                if fresh
                else None
            )
            w.emit(
                Event(
                    TurnStarted(
                        message_ids=handle.message_ids,
                        model=provider.model,
                        mode=session.mode,
                        resumed=handle.resumed,
                    ),
                    session.id,
                    handle.run_id,
                )
            )
            # Turn counts on this announcement of its first round.
            progress = handle.progress(handle.started_at, ProgressState.RUNNING, thinking_step(1))
            w.emit(Event(progress, session.id, handle.run_id))
    except BaseException:
        session.running = None
        session.queue.push_front(entries)
        raise
    log.info("turn started", extra=turn_fields(session, handle) | {"resumed": handle.resumed})
    if row_id is not None:
        transcript.append(row, row_id, [e.id for e in fresh])
        transcript.files.update(await rt.store.files([a.id for a in row.attachments()]))
    outcome: TurnOutcome | None = None  # None: the process stopped while it ran
    try:
        caps = [e.message.max_rounds for e in entries if e.message.max_rounds is not None]
        budget = rt.models.budget(agent, rt.turn_deps.budget)
        deps = replace(rt.turn_deps, provider=provider, budget=budget)
        turn = Turn(deps, session, agent, handle, transcript, min(caps, default=None))
        outcome = await turn.run()
    except asyncio.CancelledError:
        raise  # shutdown: the run stays "running" and is recovered on the next open
    except HandedBack:  # as a shutdown leaves it, at a safe point: resumed on the next open
        log.info("turn handed back at a safe point", extra=turn_fields(session, handle))
        handle.finished.set()
        return
    except Exception as exc:
        log.exception("turn crashed", extra={"session_id": session.id, "run_id": handle.run_id})
        outcome = TurnOutcome(RunStatus.FAILED, "", f"internal error: {exc!r}")
    finally:
        session.running = None
        log_turn_end(rt, session, handle, outcome)
    await finish_run(rt, session, handle, outcome)


OUTCOME_WORDS = {RunStatus.COMPLETED: "answered"}  # the others are their status's own word


def turn_fields(session: Session, handle: RunHandle) -> dict[str, object]:
    """Who and where, for a turn's log lines (the bridge names an agent `workspace/agent`)."""
    workspace, slash, agent = session.record.agent_id.partition("/")
    return {
        **({"workspace": workspace, "agent": agent} if slash else {"agent": workspace}),
        "session_id": session.id,
        "run_id": handle.run_id,
        "messages": len(handle.message_ids),
    }


def log_turn_end(
    rt: Host, session: Session, handle: RunHandle, outcome: TurnOutcome | None
) -> None:
    """The turn's one end line: how it ended, its rounds, tokens and duration (never text)."""
    duration_s = round(rt.clock.monotonic() - handle.started_at, 3)
    who = turn_fields(session, handle)
    if outcome is None:
        log.info(
            "turn ended",
            extra={"outcome": RunStatus.INTERRUPTED.value, "duration_s": duration_s} | who,
        )
        return
    fields: dict[str, object] = {"outcome": OUTCOME_WORDS.get(outcome.status, outcome.status.value)}
    if outcome.error:  # why it stopped (who stopped it) or failed
        fields["reason" if outcome.status is RunStatus.STOPPED else "error"] = outcome.error
    usage = outcome.usage
    fields |= {
        "rounds": outcome.rounds,
        "duration_s": duration_s,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
    }
    log.info("turn ended", extra=fields | who)


async def finish_run(rt: Host, session: Session, handle: RunHandle, outcome: TurnOutcome) -> None:
    message_status = (
        QueueStatus.ABORTED if outcome.status is RunStatus.STOPPED else QueueStatus.PROCESSED
    )
    elapsed = round(rt.clock.monotonic() - handle.started_at, 3)
    standing = rt.models.standing(rt.agents.get(session.record.agent_id), session.id)
    try:
        async with rt.store.write() as w:
            w.finish_run(handle.run_id, outcome.status, outcome.final_text, outcome.error)
            w.set_message_status(handle.message_ids, message_status)
            w.emit(
                Event(
                    TurnFinished(
                        outcome=outcome.status,
                        final_text=outcome.final_text,
                        error=outcome.error,
                        duration_s=elapsed,
                        message_ids=handle.message_ids,
                        input_tokens=outcome.usage.input_tokens,
                        output_tokens=outcome.usage.output_tokens,
                        cache_read_tokens=outcome.usage.cache_read_tokens,
                        cache_write_tokens=outcome.usage.cache_write_tokens,
                        context_tokens=outcome.context_tokens,
                        fallback=standing,
                        resumed=handle.resumed,
                    ),
                    session.id,
                    handle.run_id,
                )
            )
    finally:
        handle.finished.set()
    parent_id = session.record.parent_session_id
    if parent_id and not handle.silent_stop and parent_id in rt.sessions:
        await report_to_parent(rt, session, handle.run_id, outcome, handle.payer)


def request_compaction(rt: Host, session: Session) -> CompactStatus:
    """/compact: before the running turn's next model request, or, when the session is idle,
    at once in a task of its own."""
    session.compact_requested = True
    if session.running is not None or session.worker is not None:
        return CompactStatus.AT_NEXT_STEP
    if session.compaction is not None:
        return CompactStatus.STARTED
    task = asyncio.get_running_loop().create_task(
        compact_idle(rt, session), name=f"compact-{session.id}"
    )
    session.compaction = task

    def done(_: asyncio.Task[None]) -> None:
        session.compaction = None

    task.add_done_callback(done)
    return CompactStatus.STARTED


async def compact_idle(rt: Host, session: Session) -> None:
    """/compact on an idle session: in the background, before any turn that starts meanwhile."""
    async with session.turn_lock:
        if not session.compact_requested:
            return  # a turn took the request
        session.compact_requested = False
        try:
            transcript = await rt.store.transcript(session.id)
            agent = rt.agents.get(session.record.agent_id)
            deps = replace(
                rt.turn_deps,
                provider=rt.models.between_turns(agent, session.id),
                budget=rt.models.budget(agent, rt.turn_deps.budget),
            )
            idle = await Idle.of(deps, session.id, session.record.agent_id, transcript)
            await compact(
                rt.store,
                deps.provider,
                transcript,
                session_id=session.id,
                run_id=None,
                budget=deps.budget,
                context=session.context,
                guard=unguarded,
                requested=True,
                bill=idle.bill(CallPurpose.COMPACTION),
                flush=idle.flush(agent),
            )
        except Exception:
            log.exception("compaction failed", extra={"session_id": session.id})
