"""A held turn told in chat: its own conversation gets why and until when, with Approve spend
and Stop buttons (a platform without buttons names the command instead); the primary operator
gets the same, through the usual routing (a schedule paused at its limit: the primary alone).
A turn that goes on again says so."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from bridge.dispatch_cursor import advance
from bridge.routing import Router
from bridge.spend import words
from bridge.store.spend import SpendStore, hold_ended, hold_recorded
from bridge.store.store import BridgeStore
from bridge.types import Answer, Button, DeliveryKind, Route
from config.timing import zone
from runtime.engine import Runtime
from runtime.events import Event
from runtime.messages import Origin
from runtime.payloads import SpendHeld, SpendReleased
from runtime.spend import HoldKind


async def held_now(
    runtime: Runtime, session_id: str, tz: ZoneInfo, *, buttons: bool = True
) -> Answer | None:
    """The answer, at once, to a message for a session whose turn a budget holds: which
    budget, until when, how to go on (else the message would wait unanswered). `buttons`:
    whether the platform shows the answer's button (else the command is named)."""
    run = runtime.held.of(session_id)
    if run is None or run.held is None:
        return None
    # The dispatcher records the hold just after the turn is held: the reason names it too.
    held = (await SpendStore(runtime.store).holds([run.run_id])).get(run.run_id)
    text = words.HELD_NOW.format(
        agent=runtime.session(session_id).agent_id,
        which=f"budget {held.budget}" if held else "a budget",
        reason=run.held,
        until=words.until(held.until if held else None, tz, runtime.clock.wall()),
        approve=words.approve(buttons, both=True),
    )
    return Answer(text, (Button("Approve spend", f"/approve_spend {run.run_id}"),))


class SpendNotices:
    def __init__(self, runtime: Runtime, store: BridgeStore, router: Router) -> None:
        self._runtime = runtime
        self._store = store
        self._router = router

    async def held(self, event: Event, held: SpendHeld) -> None:
        session_id, run_id = event.session_id or "", event.run_id or ""
        workspace = self._router.workspace_of_session(session_id)
        now = self._runtime.clock.wall()
        until = words.until(held.until, zone(workspace.timezone), now) if workspace else ""
        primary = self._router.primary_route(workspace) if workspace else None
        here = None
        if held.kind is HoldKind.WAIT:
            here = await self._router.resolve(session_id, run_id)
        approve = Button("Approve spend", f"/approve_spend {run_id}")
        sends: list[tuple[str, Route, str, tuple[Button, ...]]] = []
        if here is not None:
            # /stop acts on the conversation's own session: offered where the turn is its own.
            first = await self._runtime.store.first_message_of_run(run_id)
            asked = first is not None and first.message.origin is Origin.OPERATOR
            typed = words.approve(self._router.has_buttons(here), "" if asked else run_id)
            text = words.HELD.format(reason=held.reason, until=until, approve=typed)
            buttons: tuple[Button, ...] = (
                (approve, Button("Stop", "/stop")) if asked else (approve,)
            )
            sends.append((f"dlv_event_{event.seq}", here, text, buttons))
        if primary is not None and primary.conversation_key not in {
            r.conversation_key for _, r, _, _ in sends
        }:
            if held.kind is HoldKind.END:
                schedule = held.budget.partition(":")[2].partition("/")[0]
                text = words.SCHEDULE_PAUSED.format(id=schedule, reason=held.reason, until=until)
                buttons = ()
            else:
                payer = f" (for {held.payer})" if held.payer else ""
                text = words.HELD_PRIMARY.format(
                    agent=held.agent_id,
                    payer=payer,
                    reason=held.reason,
                    until=until,
                    approve=words.approve(self._router.has_buttons(primary), run_id),
                )
                buttons = (approve,)
            sends.append((f"dlv_event_{event.seq}_primary", primary, text, buttons))
        async with self._store.write() as tx:
            for intent_id, route, text, buttons in sends:
                tx.enqueue(intent_id, route, DeliveryKind.COMMAND_REPLY, text, buttons)
            if held.kind is HoldKind.WAIT:  # what every status says of the turn
                hold_recorded(tx, run_id, session_id, held.budget, held.until)
            advance(tx, event.seq)

    async def released(self, event: Event, released: SpendReleased) -> None:
        route = await self._router.resolve(event.session_id or "", event.run_id)
        text = words.RELEASED_BY.format(by=released.by) if released.by else words.RELEASED
        async with self._store.write() as tx:
            if route is not None:
                tx.enqueue(f"dlv_event_{event.seq}", route, DeliveryKind.COMMAND_REPLY, text)
            hold_ended(tx, event.run_id or "")
            advance(tx, event.seq)
