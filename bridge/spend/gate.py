"""The bridge's answer to the runtime's question before each model call: may it be made?

Every budget of the call's workspace that the call counts against is read from the store
(the sum of its period's calls, so replicas and restarts agree, and what the calls under way
have reserved), and the call's estimated cost added. A budget it would pass holds the turn
(the operator may approve a bounded amount more: `approve_usd`/`approve_tokens`, by default
one warn step); a schedule's own budget ends the run and pauses the schedule. A call let
through reserves its estimate in one statement that checks every budget again under the
write lock (`bridge/store/spend.py`): what was read before that await only words the hold,
it never lets a call through. The reservation goes when the call's usage is recorded, in the
same commit. A budget past its `warn_at` share tells the primary operator, once per period."""

from __future__ import annotations

import logging
from typing import Protocol

from bridge.routing import Router
from bridge.spend import words
from bridge.spend.budgets import Standing, applies, standing, usage_filter
from bridge.store.spend import Ceiling, SpendStore, release, reserve, warning_sent
from bridge.store.store import BridgeStore
from bridge.types import DeliveryKind
from config.budgets import BudgetConfig
from config.current import CurrentConfig
from config.schema import WorkspaceConfig
from config.timing import zone
from runtime.engine import Runtime
from runtime.errors import ConditionFailedError, LeaseLostError, StoreConflictError
from runtime.spend import CallRecording, Charge, HoldKind, PlannedCall, SpendHold, cost_of

log = logging.getLogger(__name__)

BUDGET_PAUSER = "budget"  # who a schedule paused at its limit was paused by
ATTEMPTS = 5  # reservations refused although the budgets read had room: others took it


class Pausing(Protocol):
    """What the gate needs of the schedules (`bridge/automation/schedules.py`)."""

    def paused(self, workspace_id: str, schedule_id: str) -> bool: ...

    async def pause(self, workspace_id: str, schedule_id: str, by: str) -> None: ...


class BudgetGate:
    def __init__(
        self,
        config: CurrentConfig,
        runtime: Runtime,
        store: BridgeStore,
        router: Router,
        schedules: Pausing,
    ) -> None:
        self._config = config
        self._runtime = runtime
        self._store = store
        self._spend = SpendStore(runtime.store)
        self._router = router
        self._schedules = schedules
        self._warned: set[tuple[str, str, float]] = set()  # known sent: no need to ask
        self._reserved: set[str] = set()  # runs holding a reservation made here
        # (run, budget) -> (the approval, the ceiling it allows): each approval a bounded step
        self._approved: dict[tuple[str, str], tuple[int, float]] = {}

    async def before_call(self, call: PlannedCall) -> SpendHold | None:
        workspace = self._config.workspace(call.charge.agent_id.partition("/")[0])
        if workspace is None:
            return None
        budgets = [b for b in workspace.budgets if applies(b, workspace.id, call.charge)]
        if not budgets:
            return None
        cost, _ = cost_of(self._runtime.turn_deps.prices, call.model, call.estimate)
        tokens = call.estimate.request_tokens + call.estimate.output_tokens
        run_id = call.charge.run_id or ""
        found: list[Standing] = []
        for _ in range(ATTEMPTS):
            now = self._runtime.clock.wall()
            found = [await self._standing(workspace, b, run_id, now) for b in budgets]
            for s in found:
                await self._warn(workspace, s, now)
            hold = self._hold(found, call, cost, tokens)
            if hold is not None:
                return await self._held(workspace, hold)
            ceilings = [
                Ceiling(
                    usage_filter(s.budget, workspace.id, s.start, s.end),
                    s.dollars,
                    self._ceiling(s, call) or s.limit,  # a ceiling is never 0
                )
                for s in found
            ]
            try:
                async with self._runtime.store.write() as w:
                    reserve(w, call.charge, cost, tokens, ceilings)
            except LeaseLostError:
                raise  # this replica no longer runs the turn
            except ConditionFailedError:
                continue  # another call took the room meanwhile: read again
            self._reserved.add(run_id)
            return None
        fullest = max(found, key=lambda s: s.share)
        hold = SpendHold(HoldKind.WAIT, words.reason(fullest), fullest.budget.key, fullest.end)
        return await self._held(workspace, hold)

    def settled(self, w: CallRecording, charge: Charge) -> None:
        run_id = charge.run_id or ""
        if run_id in self._reserved:
            release(w, run_id)
            w.after_commit(lambda: self._reserved.discard(run_id))

    async def finished(self, charge: Charge) -> None:
        run_id = charge.run_id or ""
        for key in [k for k in self._approved if k[0] == run_id]:
            del self._approved[key]
        if run_id not in self._reserved:
            return
        self._reserved.discard(run_id)
        try:
            async with self._runtime.store.write() as w:
                release(w, run_id)
        except Exception as exc:  # the turn's outcome matters more: it expires by itself
            log.warning(
                "spend reservation not released; it expires by itself",
                extra={"run_id": run_id, "error": str(exc)},
            )

    async def _standing(
        self, workspace: WorkspaceConfig, budget: BudgetConfig, run_id: str, now: float
    ) -> Standing:
        s = await standing(self._runtime.store.usage, workspace, budget, now)
        which = usage_filter(budget, workspace.id, s.start, s.end)
        reserved = await self._spend.reserved(which, s.dollars, run_id, now)
        return Standing(s.budget, s.spent, s.start, s.end, reserved)

    def _ceiling(self, s: Standing, call: PlannedCall) -> float | None:
        """An approved turn's ceiling for this budget: what was spent (or the limit) when
        the approval came, and one approval's step more; None: not approved (or a schedule's
        own budget, which no approval lets past)."""
        if not call.approved or not call.approval or s.budget.scope == "schedule":
            return None
        key = (call.charge.run_id or "", s.budget.key)
        seen = self._approved.get(key)
        if seen is None or seen[0] < call.approval:
            top = max(s.limit, s.used + s.reserved) + s.budget.approve_step
            seen = self._approved[key] = (call.approval, top)
        return seen[1]

    def _hold(
        self, found: list[Standing], call: PlannedCall, cost: float, tokens: int
    ) -> SpendHold | None:
        """What holds the call, on the budgets as read: a schedule's own ends the run."""
        hold = None
        for s in found:
            if s.budget.scope == "schedule" and s.would_pass(cost, tokens):
                return SpendHold(HoldKind.END, words.reason(s), s.budget.key, s.end)
            ceiling = self._ceiling(s, call)
            if hold is None and s.would_pass(cost, tokens, ceiling):
                reason = words.approved_spent(s) if call.approval else words.reason(s)
                hold = SpendHold(HoldKind.WAIT, reason, s.budget.key, s.end)
        return hold

    async def _held(self, workspace: WorkspaceConfig, hold: SpendHold) -> SpendHold:
        if hold.kind is HoldKind.END:
            await self._pause(workspace, hold.budget.partition(":")[2].partition("/")[0])
        return hold

    async def _pause(self, workspace: WorkspaceConfig, schedule_id: str) -> None:
        if not self._schedules.paused(workspace.id, schedule_id):
            await self._schedules.pause(workspace.id, schedule_id, BUDGET_PAUSER)

    async def _warn(self, workspace: WorkspaceConfig, s: Standing, now: float) -> None:
        warn_at = s.budget.warn_at
        key = (workspace.id, s.budget.key, s.start)
        if warn_at is None or s.share < warn_at or key in self._warned:
            return
        if await self._spend.warned(*key):
            self._warned.add(key)
            return
        route = self._router.primary_route(workspace)
        text = words.warned(s, zone(workspace.timezone), now)
        try:
            async with self._store.write() as tx:
                warning_sent(tx, *key)
                if route is not None:
                    intent = f"dlv_spend_warn_{workspace.id}_{s.budget.key}_{int(s.start)}"
                    tx.enqueue(intent, route, DeliveryKind.COMMAND_REPLY, text)
        except StoreConflictError:
            pass  # another turn (or replica) sent it
        self._warned.add(key)
        log.info(
            "budget warning sent",
            extra={"workspace_id": workspace.id, "budget": s.budget.key, "share": s.share},
        )
