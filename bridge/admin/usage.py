"""The console's Usage page: a workspace's spend (`bridge.spend`'s report, the numbers /usage
says in chat) and the turns a budget holds now; the admin's Approve spend lets one of them go
on past its budgets, as an operator's /approve-spend does, and is recorded in the audit of
admin actions."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from bridge.activity import agent_name
from bridge.admin.errors import NotPossible
from bridge.admin.view import AdminView
from bridge.admin.words import by_admin
from bridge.events import AdminActionKind
from bridge.service import Bridge
from bridge.session_names import costliest_sessions
from bridge.spend import words
from bridge.spend.report import UsageReport, usage_report
from bridge.store.records import AdminActionRecord
from config.schema import SwitchboardConfig, WorkspaceConfig

log = logging.getLogger(__name__)

NOT_HELD = "this session's turn no longer waits on a budget (it went on, or ended)"


@dataclass(frozen=True, slots=True)
class HeldTurn:
    """A turn waiting before its next model call because a budget would be passed."""

    session_id: str
    run_id: str
    agent: str  # as the config names it
    where: str  # the session by its name
    reason: str  # which budget, and how much of it is spent


@dataclass(frozen=True, slots=True)
class UsageBoard:
    report: UsageReport
    held: list[HeldTurn]
    # each session of the workspace by its name (`bridge/session_names.py`) and agent
    sessions: dict[str, str]
    now: float  # wall time of the read


async def read_usage(
    bridge: Bridge, config: SwitchboardConfig, workspace: WorkspaceConfig
) -> UsageBoard:
    runtime = bridge.runtime
    now = runtime.clock.wall()
    report = await usage_report(runtime.store.usage, workspace, now)
    report = replace(report, sessions=await costliest_sessions(runtime.store.usage, report, now))
    rows = await AdminView(bridge, config).sessions(workspace.id)
    held = []
    for row in rows:
        run = runtime.held.of(row.session_id)
        if run is not None and run.held is not None:
            name = agent_name(row.agent_id)
            held.append(HeldTurn(row.session_id, run.run_id, name, row.name, run.held))
    names = {r.session_id: f"{r.name} \u00b7 {agent_name(r.agent_id)}" for r in rows}
    return UsageBoard(report, held, names, now)


async def approve_spend(
    bridge: Bridge,
    config: SwitchboardConfig,
    workspace: WorkspaceConfig,
    session_id: str,
    admin: str,
) -> str:
    """Let the session's held turn go on past its budgets (this turn only); the admin is named
    as who approved, in the conversation and the audit. The one line the console flashes."""
    AdminView(bridge, config).check_session(workspace.id, session_id)
    held = bridge.runtime.held
    run = held.of(session_id)
    if run is None or run.held is None:
        raise NotPossible(NOT_HELD)
    reason, agent_id = run.held, bridge.runtime.session(session_id).agent_id
    if held.approve(session_id, by_admin(admin)) is None:  # it went on, or ended, meanwhile
        raise NotPossible(NOT_HELD)
    async with bridge.store.write() as tx:
        tx.admin_action(
            AdminActionRecord(
                workspace.id, admin, AdminActionKind.APPROVE_SPEND, run.run_id, session_id, reason
            )
        )
    log.info(
        "spend approved",
        extra={"session_id": session_id, "run_id": run.run_id, "by": by_admin(admin)},
    )
    return words.APPROVED.format(agent=agent_name(agent_id))
