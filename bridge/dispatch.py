"""Runtime events out to chat: turn results and notifications become delivery intents,
drops are told to their sender, progress goes to the presenter (DESIGN §3)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from bridge import texts
from bridge.activity import agent_name
from bridge.approvals import duration, request_text
from bridge.automation.runs import Answer, answer_of, source_label
from bridge.dispatch_cursor import advance
from bridge.events import DeliveryQueued, NotificationUnroutable, OutputUnroutable
from bridge.memory_notices import MemoryNotices
from bridge.metrics import Metrics
from bridge.progress import ProgressPresenter
from bridge.routing import Router
from bridge.spend.notices import SpendNotices
from bridge.store.automation import run_ended
from bridge.store.records import NotificationPost
from bridge.store.store import BridgeStore
from bridge.store.transaction import BridgeTx
from bridge.types import DeliveryKind, Route
from runtime.engine import Runtime
from runtime.events import Event
from runtime.messages import Origin
from runtime.notifications import summarize
from runtime.payloads import (
    ApprovalDecided,
    ApprovalRequested,
    AssistantText,
    AssistantTextDelta,
    ContextCompacted,
    InterjectionAdmitted,
    MemoryEvicted,
    MemoryOffered,
    MessageDropped,
    NotificationRequested,
    Progress,
    ProviderRetry,
    SpendHeld,
    SpendReleased,
    TurnFinished,
    TurnStarted,
)
from runtime.providers.base import FALLING_BACK
from runtime.records import AgentProfile, ApprovalStatus, OperatorBoundary, RunStatus

log = logging.getLogger(__name__)


def raised_by(notification: NotificationRequested) -> str:
    """Who raised a notification: its agent, or a child on its parent's behalf."""
    if notification.target_operator_boundary is OperatorBoundary.PARENT_SUPERVISOR:
        return texts.NOTIFICATION_FROM_CHILD.format(
            child=agent_name(notification.requested_by_agent_id),
            agent=agent_name(notification.agent_id),
        )
    return texts.NOTIFICATION_FROM.format(agent=agent_name(notification.agent_id))


class Dispatcher:
    """What each ledger event becomes in chat (`handle`), as the followers read them
    (`bridge/ledger_followers.py`: which events, from where)."""

    def __init__(
        self,
        runtime: Runtime,
        store: BridgeStore,
        router: Router,
        presenter: ProgressPresenter,
        metrics: Metrics,
        wake: Callable[[str], None],
    ) -> None:
        """`wake`: the outbox's, for what another replica stored to send (`DeliveryQueued`)."""
        self._runtime = runtime
        self._store = store
        self._router = router
        self._presenter = presenter
        self._metrics = metrics
        self._wake = wake
        self._spend = SpendNotices(runtime, store, router)
        self._memory = MemoryNotices(store, router)
        self._routes: dict[str, Route | None] = {}  # by run id

    async def handle(self, event: Event) -> None:
        match event.data:
            case DeliveryQueued(conversation_key=conversation_key):
                self._wake(conversation_key)
            case TurnFinished() as finished:
                await self._turn_finished(event, finished)
            case NotificationRequested() as notification:
                await self._notification(event, notification)
            case ApprovalRequested() as asked:
                await self._approval(event, asked)
            case ApprovalDecided(status=ApprovalStatus.TIMED_OUT) as decided:
                await self._approval_timed_out(event, decided)
            case MessageDropped() as dropped:
                await self._dropped(event, dropped)
            case InterjectionAdmitted(boundary=boundary):
                self._metrics.interjections.inc(boundary=boundary)
                where = texts.BOUNDARY_WORDS[boundary]
                await self._presenter.note(
                    event.run_id or "", texts.INTERJECTED.format(where=where)
                )
            case ContextCompacted() as compacted:
                await self._compacted(event, compacted)
            case SpendHeld() as held:
                await self._spend.held(event, held)
            case SpendReleased() as released:
                await self._spend.released(event, released)
            case MemoryEvicted() as evicted:
                await self._memory.evicted(event, evicted)
            case MemoryOffered() as offered:
                self._metrics.memory_offered(offered.agent_id, offered.memories, offered.tokens)
            case TurnStarted(resumed=resumed):
                await self._progress(event, "starting", 0.0)
                if resumed and not self._is_child(event.session_id or ""):
                    # Told at once under the turn's status; its answer says so again. Not a
                    # message of its own: on Slack that would hold the answer a channel window.
                    await self._presenter.note(event.run_id or "", texts.TURN_RESUMED)
            case Progress(step=step, elapsed_s=elapsed):
                await self._progress(event, step, elapsed)
            case AssistantTextDelta(delta=delta, restart=restart) if event.run_id:
                # ephemeral: never replayed
                self._presenter.stream(event.run_id, delta, restart=restart)
            case ProviderRetry(error=error) if event.run_id and error.startswith(FALLING_BACK):
                await self._presenter.note(event.run_id, error)
            case AssistantText(text=text, tool_calls=calls, wakeup=wakeup) if event.run_id:
                self._presenter.round_over(event.run_id, tool_calls=bool(calls))
                if calls and text.strip() and not wakeup:
                    # What the agent says while it works (its final words are the turn
                    # result): a note under the step. Words with a wake-up are the answer
                    # once it is set: as a note too, a terminal would print them twice.
                    await self._presenter.note(event.run_id, text.strip())

    # -- handlers ----------------------------------------------------------------------

    async def _progress(self, event: Event, step: str, elapsed_s: float) -> None:
        session_id, run_id = event.session_id, event.run_id
        if session_id is None or run_id is None or self._is_child(session_id):
            return
        if self._runtime.status(session_id).run_id != run_id:
            return  # replayed from the ledger: that turn is over
        route = await self._route(session_id, run_id)
        if route is not None:
            self._presenter.update(route, run_id, step, elapsed_s)

    async def _turn_finished(self, event: Event, finished: TurnFinished) -> None:
        session_id, run_id = event.session_id or "", event.run_id
        self._metrics.turn_seconds.observe(finished.duration_s)
        stopped = finished.outcome is RunStatus.STOPPED
        await self._presenter.finish(run_id or "", stopped=stopped)
        self._routes.pop(run_id or "", None)
        if self._is_child(session_id):
            return  # a child's answer goes to its parent, as a task_result message
        match finished.outcome:
            case RunStatus.COMPLETED:
                text = finished.final_text
            case RunStatus.FAILED:
                text = texts.TURN_FAILED.format(error=finished.error)
            case _:
                text = ""  # stopped: the /stop reply (or the interrupting turn) says so
        if finished.resumed and text.strip():
            text = texts.RESUMED_ANSWER.format(answer=text)
        first = await self._runtime.store.first_message_of_run(run_id) if run_id else None
        automated = answer_of(first, finished.outcome, text) if first else None
        if first is not None and automated is not None:
            await self._automated(event, first.id, automated, finished.error)
            workspace = self._router.workspace_of_session(session_id)
            kind = (first.message.provenance.sender or "").partition(" ")[0]
            self._metrics.automation_runs.inc(
                workspace=workspace.id if workspace else "", kind=kind, outcome=automated.outcome
            )
            return
        if not text.strip():
            return
        route = await self._router.resolve(session_id, run_id, first)
        await self._deliver(event, route, DeliveryKind.TURN_RESULT, text)

    async def _automated(
        self, event: Event, message_id: str, answer: Answer, error: str | None
    ) -> None:
        """A scheduled or triggered run ended: its outcome kept with its run, its answer (if
        any) delivered under a line naming what started it. A reply to that answer reaches
        the run's session, as a reply to a notification reaches the agent that raised it."""
        route = None
        if answer.text is not None:
            route = await self._router.resolve(event.session_id or "", event.run_id)
        async with self._store.write() as tx:
            run_ended(tx, message_id, answer.outcome, error)
            if answer.text is not None and route is None:
                unroutable = OutputUnroutable(
                    kind=DeliveryKind.TURN_RESULT, event_seq=event.seq, text=answer.text[:200]
                )
                tx.emit(unroutable, event.session_id, event.run_id)
            elif answer.text is not None and route is not None:
                intent_id = self._intent_id(event)
                tx.enqueue(intent_id, route, DeliveryKind.TURN_RESULT, answer.text)
                session_id = event.session_id or ""
                agent_id = self._runtime.session(session_id).agent_id
                summary = summarize(answer.summary)
                post = NotificationPost(answer.post_id, session_id, agent_id, agent_id, summary)
                tx.route_notification(answer.post_id, intent_id, post)
            self._advance(tx, event)

    async def _notification(self, event: Event, notification: NotificationRequested) -> None:
        route = await self._router.resolve(event.session_id or "", event.run_id)
        text = texts.NOTIFICATION.format(
            agent=agent_name(notification.requested_by_agent_id), message=notification.message
        ) + raised_by(notification)
        first = (
            await self._runtime.store.first_message_of_run(event.run_id) if event.run_id else None
        )
        started_by = source_label(first) if first else None
        if started_by is not None:  # a schedule's or trigger's run: say which
            text = f"{started_by}\n{text}"
        # A reply to it, or a press of its buttons, acts on the session that raised it: the
        # notification's own (a private child's names its parent's: the parent supervises).
        post = NotificationPost(
            notification.notification_id,
            event.session_id or "",
            notification.agent_id,
            notification.requested_by_agent_id,
            notification.summary,
        )
        async with self._store.write() as tx:
            if route is None:
                tx.route_notification(notification.notification_id, None)
                unroutable = NotificationUnroutable(
                    notification_id=notification.notification_id, summary=notification.summary
                )
                tx.emit(unroutable, event.session_id)
            else:
                intent_id = self._intent_id(event)
                tx.enqueue(intent_id, route, DeliveryKind.NOTIFICATION, text)
                tx.route_notification(notification.notification_id, intent_id, post)
            self._advance(tx, event)

    async def _approval(self, event: Event, asked: ApprovalRequested) -> None:
        """The buttons go where the turn's output goes (a private child's: its parent's)."""
        route = await self._router.resolve(event.session_id or "", event.run_id)
        text = request_text(asked, self._runtime.clock.wall())
        async with self._store.write() as tx:
            if route is None:
                unroutable = OutputUnroutable(
                    kind=DeliveryKind.APPROVAL, event_seq=event.seq, text=text[:200]
                )
                tx.emit(unroutable, event.session_id, event.run_id)
            else:
                intent_id = self._intent_id(event)
                tx.enqueue(intent_id, route, DeliveryKind.APPROVAL, text)
                tx.asks(intent_id, "approval", asked.approval_id)
            self._advance(tx, event)

    async def _approval_timed_out(self, event: Event, decided: ApprovalDecided) -> None:
        record = await self._runtime.approvals.get(decided.approval_id)
        waited = duration(record.deadline - record.created_at) if record else "the time allowed"
        route = await self._router.resolve(event.session_id or "", event.run_id)
        text = texts.APPROVAL_TIMED_OUT.format(within=waited, tool=decided.tool)
        await self._deliver(event, route, DeliveryKind.COMMAND_REPLY, text)

    async def _compacted(self, event: Event, compacted: ContextCompacted) -> None:
        """Said in the turn's progress when it happened in a turn; answered, as the reply to
        /compact, when the operator asked for it between turns."""
        if compacted.rows == 0:
            text = texts.TOO_SHORT_TO_COMPACT
        elif compacted.fallback:
            text = texts.COMPACTED_FALLBACK.format(error=compacted.error, rows=compacted.rows)
        elif compacted.requested:
            text = texts.COMPACTED.format(rows=compacted.rows, tokens=compacted.tokens_after)
        else:
            text = texts.COMPACTED_NOTE
        if event.run_id is not None:
            await self._presenter.note(event.run_id, text)
            return
        route = await self._router.resolve(event.session_id or "", None)
        await self._deliver(event, route, DeliveryKind.COMMAND_REPLY, text)

    async def _dropped(self, event: Event, dropped: MessageDropped) -> None:
        raw = dropped.reply_route
        route = Route.model_validate(raw) if raw else None
        text = texts.DROPPED.format(text=dropped.text[:80], reason=dropped.reason)
        await self._deliver(event, route, DeliveryKind.COMMAND_REPLY, text)

    # -- helpers -----------------------------------------------------------------------

    async def _deliver(
        self, event: Event, route: Route | None, kind: DeliveryKind, text: str
    ) -> None:
        async with self._store.write() as tx:
            if route is None:
                unroutable = OutputUnroutable(kind=kind, event_seq=event.seq, text=text[:200])
                tx.emit(unroutable, event.session_id, event.run_id)
            else:
                tx.enqueue(self._intent_id(event), route, kind, text)
            self._advance(tx, event)

    @staticmethod
    def _intent_id(event: Event) -> str:
        """Deterministic, so handling an event twice (after a crash) delivers it once."""
        return f"dlv_event_{event.seq}"

    @staticmethod
    def _advance(tx: BridgeTx, event: Event) -> None:
        advance(tx, event.seq)

    def _is_child(self, session_id: str) -> bool:
        return self._runtime.session(session_id).profile is AgentProfile.PRIVATE_CHILD

    async def _route(self, session_id: str, run_id: str) -> Route | None:
        """Where a turn's progress shows: nowhere for a run nobody wrote for (a schedule's,
        a trigger's, a wake-up's): its answer comes, but nobody waits on its steps."""
        if run_id not in self._routes:
            first = await self._runtime.store.first_message_of_run(run_id)
            unasked = first is not None and first.message.origin in (Origin.TIMER, Origin.CHANNEL)
            route = None if unasked else await self._router.resolve(session_id, run_id, first)
            self._routes[run_id] = route
        return self._routes[run_id]
