"""What every turn is given (`TurnDeps`), wired once from the runtime's own parts: its store,
provider, tools and clock, its context budget, the notify and spawn tools' way back into the
runtime, approvals, wake-ups, prices, guards and memory. A spend gate (`limit_spend`), a
reload or a turn's own provider replaces parts of it later."""

from __future__ import annotations

from functools import partial

from runtime.approvals import Approvals
from runtime.children import spawn_child
from runtime.context import Budget, window_of
from runtime.guards import TurnLimits
from runtime.host import Host
from runtime.memory import Memories
from runtime.notifications import notify_for_turn
from runtime.spend import NoLimits
from runtime.tools.registry import ToolRegistry
from runtime.turn_types import TurnDeps
from runtime.wakeups import Alarm, limits_of


def turn_deps_of(
    rt: Host, tools: ToolRegistry, approvals: Approvals, alarm: Alarm, memories: Memories
) -> TurnDeps:
    settings, provider = rt.settings, rt.provider
    return TurnDeps(
        rt.store,
        provider,
        tools,
        rt.clock,
        settings.max_rounds,
        Budget(
            window_of(provider.model, settings.context_window),
            settings.max_tokens,
            settings.compact_at,
            settings.keep_recent,
        ),
        partial(notify_for_turn, rt),
        partial(spawn_child, rt),
        approvals,
        lambda session, run_id, when, note: alarm.wake_later(
            session.id, run_id, when, note, limits_of(rt.agents, session)
        ),
        settings.prices,
        NoLimits(),
        TurnLimits(settings.max_turn_tokens, settings.max_repeated_calls),
        memories,
    )
