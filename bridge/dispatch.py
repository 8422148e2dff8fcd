"""Runtime events out to chat: turn results and notifications become delivery intents,
drops are told to their sender, progress goes to the presenter (DESIGN §3)."""

from __future__ import annotations

import asyncio
import logging

from bridge import texts
from bridge.metrics import Metrics
from bridge.outbox import Outbox
from bridge.progress import ProgressPresenter
from bridge.routing import Router
from bridge.types import DeliveryKind, Route
from runtime import EventType, Runtime
from runtime.events import Event
from runtime.records import AgentProfile
from runtime.store import Writer

log = logging.getLogger(__name__)

CURSOR = "dispatch"


class Dispatcher:
    def __init__(
        self,
        runtime: Runtime,
        router: Router,
        outbox: Outbox,
        presenter: ProgressPresenter,
        metrics: Metrics,
    ) -> None:
        self._runtime = runtime
        self._store = runtime.store
        self._router = router
        self._outbox = outbox
        self._presenter = presenter
        self._metrics = metrics
        self._routes: dict[str, Route | None] = {}  # by run id
        self.handled_seq = 0
        self._handled = asyncio.Condition()

    async def cursor(self) -> int:
        rows = await self._store.fetch_all("SELECT seq FROM cursors WHERE name = ?", (CURSOR,))
        return int(rows[0]["seq"]) if rows else 0

    async def run(self) -> None:
        """Follow the ledger from where the last run stopped; each event handled once."""
        cursor = await self.cursor()
        await self._handled_up_to(cursor)
        async for event in self._runtime.events(after_seq=cursor):
            try:
                await self.handle(event)
            except Exception:
                log.exception(
                    "dispatch failed", extra={"event_seq": event.seq, "event_type": event.type}
                )
            if event.seq is not None:
                await self._handled_up_to(event.seq)

    async def _handled_up_to(self, seq: int) -> None:
        async with self._handled:
            self.handled_seq = max(self.handled_seq, seq)
            self._handled.notify_all()

    async def caught_up(self, seq: int) -> None:
        """Until every ledger event up to `seq` has been handled."""
        async with self._handled:
            await self._handled.wait_for(lambda: self.handled_seq >= seq)

    async def handle(self, event: Event) -> None:
        match event.type:
            case EventType.TURN_FINISHED:
                await self._turn_finished(event)
            case EventType.OPERATOR_NOTIFICATION_REQUESTED:
                await self._notification(event)
            case EventType.MESSAGE_DROPPED:
                await self._dropped(event)
            case EventType.OPERATOR_INTERJECTION_ADMITTED:
                self._metrics.interjections.inc(boundary=event.data["boundary"])
                where = texts.BOUNDARY_WORDS.get(event.data["boundary"], event.data["boundary"])
                await self._presenter.note(
                    event.run_id or "", texts.INTERJECTED.format(where=where)
                )
            case EventType.TURN_STARTED | EventType.PROGRESS:
                await self._progress(event)
            case EventType.ASSISTANT_TEXT if event.data.get("tool_calls") and event.run_id:
                # What the agent says while it works (its final words are the turn result).
                if event.data.get("text", "").strip():
                    await self._presenter.note(event.run_id, event.data["text"].strip())

    # -- handlers ----------------------------------------------------------------------

    async def _progress(self, event: Event) -> None:
        session_id, run_id = event.session_id, event.run_id
        if session_id is None or run_id is None or self._is_child(session_id):
            return
        if self._runtime.status(session_id).run_id != run_id:
            return  # replayed from the ledger: that turn is over
        route = await self._route(session_id, run_id)
        if route is not None:
            step = event.data.get("step", "starting")
            self._presenter.update(route, run_id, step, float(event.data.get("elapsed_s", 0)))

    async def _turn_finished(self, event: Event) -> None:
        session_id, run_id = event.session_id or "", event.run_id
        self._metrics.turn_seconds.observe(float(event.data.get("duration_s", 0)))
        await self._presenter.finish(run_id or "")
        self._routes.pop(run_id or "", None)
        if self._is_child(session_id):
            return  # a child's answer goes to its parent, as a task_result message
        match event.data["outcome"]:
            case "completed":
                text = event.data.get("final_text") or ""
            case "failed":
                text = texts.TURN_FAILED.format(error=event.data.get("error"))
            case _:
                return  # stopped: the /stop reply (or the interrupting turn) says so
        if not text.strip():
            return
        route = await self._router.resolve(session_id, run_id)
        await self._deliver(event, route, DeliveryKind.TURN_RESULT, text)

    async def _notification(self, event: Event) -> None:
        data = event.data
        route = await self._router.resolve(event.session_id or "", event.run_id)
        agent = data["requested_by_agent_id"]
        text = texts.NOTIFICATION.format(agent=agent, message=data["message"])
        intent_id = self._intent_id(event)
        async with self._store.write() as w:
            if route is None:
                w.execute(
                    "INSERT OR IGNORE INTO notification_routes (notification_id, status)"
                    " VALUES (?, 'unroutable')",
                    (data["notification_id"],),
                )
                w.emit(
                    Event(
                        "notification_unroutable",
                        event.session_id,
                        {"notification_id": data["notification_id"], "summary": data["summary"]},
                    )
                )
            else:
                Outbox.enqueue(w, intent_id, route, DeliveryKind.NOTIFICATION, text)
                w.execute(
                    "INSERT OR IGNORE INTO notification_routes (notification_id,"
                    " delivery_id, status) VALUES (?, ?, 'queued')",
                    (data["notification_id"], intent_id),
                )
            self._advance(w, event)
        if route is not None:
            self._outbox.wake(route.conversation_key)

    async def _dropped(self, event: Event) -> None:
        raw = event.data.get("reply_route")
        route = Route.model_validate(raw) if raw else None
        text = texts.DROPPED.format(
            text=event.data.get("text", "")[:80], reason=event.data.get("reason")
        )
        await self._deliver(event, route, DeliveryKind.COMMAND_REPLY, text)

    # -- helpers -----------------------------------------------------------------------

    async def _deliver(
        self, event: Event, route: Route | None, kind: DeliveryKind, text: str
    ) -> None:
        async with self._store.write() as w:
            if route is None:
                w.emit(
                    Event(
                        "output_unroutable",
                        event.session_id,
                        {"kind": kind, "event_seq": event.seq, "text": text[:200]},
                        run_id=event.run_id,
                    )
                )
            else:
                Outbox.enqueue(w, self._intent_id(event), route, kind, text)
            self._advance(w, event)
        if route is not None:
            self._outbox.wake(route.conversation_key)

    @staticmethod
    def _intent_id(event: Event) -> str:
        """Deterministic, so handling an event twice (after a crash) delivers it once."""
        return f"dlv_event_{event.seq}"

    @staticmethod
    def _advance(w: Writer, event: Event) -> None:
        w.execute(
            "INSERT INTO cursors (name, seq) VALUES (?, ?) ON CONFLICT (name)"
            " DO UPDATE SET seq = MAX(seq, excluded.seq)",
            (CURSOR, event.seq),
        )

    def _is_child(self, session_id: str) -> bool:
        return self._runtime.session(session_id).profile is AgentProfile.PRIVATE_CHILD

    async def _route(self, session_id: str, run_id: str) -> Route | None:
        if run_id not in self._routes:
            self._routes[run_id] = await self._router.resolve(session_id, run_id)
        return self._routes[run_id]
