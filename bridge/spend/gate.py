"""The bridge's answer to the runtime's question before each model call: may it be made?

Every budget of the call's workspace that the call counts against is read from the store
(the sum of its period's calls, so replicas and restarts agree), and the call's estimated
cost added. A budget it would pass holds the turn (the operator may approve the spend); a
schedule's own budget ends the run and pauses the schedule. A budget past its `warn_at` share
tells the primary operator, once per period."""

from __future__ import annotations

import logging
from typing import Protocol

from bridge.routing import Router
from bridge.spend import words
from bridge.spend.budgets import Standing, applies, standing
from bridge.store import BridgeStore
from bridge.store.spend import SpendStore, warning_sent
from bridge.types import DeliveryKind
from config.current import CurrentConfig
from config.schema import WorkspaceConfig
from config.timing import zone
from runtime import Runtime
from runtime.errors import StoreConflictError
from runtime.spend import HoldKind, PlannedCall, SpendHold, cost_of

log = logging.getLogger(__name__)

BUDGET_PAUSER = "budget"  # who a schedule paused at its limit was paused by


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

    async def before_call(self, call: PlannedCall) -> SpendHold | None:
        workspace = self._config.workspace(call.charge.agent_id.partition("/")[0])
        if workspace is None or not workspace.budgets:
            return None
        cost, _ = cost_of(self._runtime.turn_deps.prices, call.model, call.estimate)
        tokens = call.estimate.request_tokens + call.estimate.output_tokens
        now = self._runtime.clock.wall()
        hold: SpendHold | None = None
        for budget in workspace.budgets:
            if not applies(budget, workspace.id, call.charge):
                continue
            s = await standing(self._runtime.store.usage, workspace, budget, now)
            await self._warn(workspace, s, now)
            if not s.would_pass(cost, tokens):
                continue
            if budget.scope == "schedule":  # ends the run, approved or not
                await self._pause(workspace, budget.id or "")
                return SpendHold(HoldKind.END, words.reason(s), budget.key, s.end)
            if not call.approved and hold is None:
                hold = SpendHold(HoldKind.WAIT, words.reason(s), budget.key, s.end)
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
