"""The admin console's reads of one workspace: connections, sessions, one session's
transcript and audit trail, deliveries, undelivered notifications. Typed rows out; every
object named by the caller is checked to belong to the workspace. The console masks the
process's secrets in everything it shows (`adapters/admin/render.py`), not here."""

from __future__ import annotations

from datetime import UTC, tzinfo

from bridge.activity import Activity, ActivityReader, agent_name
from bridge.admin.board import read_board, workspace_zone
from bridge.admin.errors import NotInWorkspace
from bridge.admin.records import (
    ApprovalRow,
    ConnectionRow,
    DeliveryRow,
    Overview,
    SessionDetail,
    SessionRow,
)
from bridge.approvals import masked
from bridge.places import place
from bridge.service import Bridge
from bridge.session_names import ordered
from bridge.status import Undelivered, undelivered_notifications
from bridge.store.records import Intent
from bridge.types import DeliveryStatus
from config.schema import SwitchboardConfig, WorkspaceConfig
from runtime.session import Session

TEXT_PREVIEW = 300  # characters of a delivery's text shown


def workspace_of_agent(agent_id: str) -> str:
    """Runtime agent ids are `<workspace>/<agent>[/child-n]`."""
    return agent_id.split("/", 1)[0]


class AdminView:
    """Reads for one request, against the config current at that moment."""

    def __init__(self, bridge: Bridge, config: SwitchboardConfig) -> None:
        self._bridge = bridge
        self._runtime = bridge.runtime
        self._config = config

    # -- sessions ----------------------------------------------------------------------

    def _sessions(self, workspace_id: str) -> list[Session]:
        """The workspace's sessions as a list reads best (`session_names.ordered`)."""
        found = {
            s.id: s
            for s in self._runtime.sessions.values()
            if workspace_of_agent(s.record.agent_id) == workspace_id
        }
        return [found[r.id] for r in ordered(s.record for s in found.values())]

    async def approvals(self, workspace_id: str) -> list[ApprovalRow]:
        """The workspace's tool calls waiting for an operator's approval, oldest first, each
        with its conversation by name."""
        found = self._sessions(workspace_id)
        where = {a.session_id: a.where for a in await self._activities(found)}
        return [
            ApprovalRow(
                a.id,
                agent_name(a.agent_id),
                where[a.session_id],
                a.session_id,
                a.tool,
                masked(a.input),
                a.created_at,
                a.deadline,
            )
            for a in await self._runtime.approvals.pending(list(where))
        ]

    def _session(self, workspace_id: str, session_id: str) -> Session:
        session = self._runtime.sessions.get(session_id)
        if session is None or workspace_of_agent(session.record.agent_id) != workspace_id:
            raise NotInWorkspace(f"workspace {workspace_id} has no session {session_id}")
        return session

    async def _activities(self, sessions: list[Session]) -> list[Activity]:
        """What each session does, read as the board reads it (a child agent's conversation
        is its parent's: the parent is among `sessions`)."""
        zone: tzinfo = UTC
        if sessions:
            zone = workspace_zone(self._bridge, workspace_of_agent(sessions[0].record.agent_id))
        reader = ActivityReader(self._runtime.store, self._bridge.store, tz=zone)
        return await reader.read([s.record for s in sessions])

    async def sessions(self, workspace_id: str) -> list[SessionRow]:
        """The workspace's sessions, each by its name (conversations as they began, each's
        current session first, child agents after their parent): what each does now in the
        board's words."""
        found = self._sessions(workspace_id)
        now = self._runtime.clock.wall()
        activities = await self._activities(found)
        return [self._row(s, a, now) for s, a in zip(found, activities, strict=True)]

    def _row(self, session: Session, activity: Activity, now: float) -> SessionRow:
        s = self._runtime.status(session.id)
        return SessionRow(
            session_id=session.id,
            agent_id=s.agent_id,
            profile=s.profile,
            parent_session_id=session.record.parent_session_id,
            where=activity.where,
            who=activity.who,
            state=s.state,
            mode=s.mode,
            queued=s.queued,
            run_id=s.run_id,
            step=s.step,
            elapsed_s=s.elapsed_s,
            doing=activity.what_for(now),
            name=activity.name,
        )

    def check_session(self, workspace_id: str, session_id: str) -> None:
        self._session(workspace_id, session_id)

    async def session(self, workspace_id: str, session_id: str) -> SessionDetail:
        """The session's row and children; its turns and audit events are paged
        (`history.py`)."""
        session = self._session(workspace_id, session_id)
        rows = await self.sessions(workspace_id)
        [row] = [r for r in rows if r.session_id == session_id]
        children = [c.id for c in self._runtime.children(session)]
        names = {r.session_id: r.name for r in rows}
        replica = None
        if self._runtime.homes is not None:
            replica = (await self._runtime.store.leases.holders([session_id])).get(session_id)
        return SessionDetail(row=row, children=children, replica=replica, names=names)

    # -- connections, deliveries, notifications -----------------------------------------

    def connections(self, workspace: WorkspaceConfig) -> list[ConnectionRow]:
        return [
            ConnectionRow.of(c, self._listens(workspace, c.platform), c.last_error)
            for c in self._bridge.metrics.connections.of(workspace.id)
        ]

    def _listens(self, workspace: WorkspaceConfig, platform: str) -> str:
        """How the platform's bot hears the workspace, as its profile says ("?": no adapter
        for it runs, or the workspace does not set it up)."""
        profile = self._bridge.platforms.profile(platform)
        listens = profile.listens(workspace) if profile is not None else None
        return listens or "?"

    async def deliveries(self, workspace_id: str) -> list[DeliveryRow]:
        """Pending, sending and failed deliveries, oldest first."""
        return [
            self._delivery(i) for i in await self._bridge.store.workspace_deliveries(workspace_id)
        ]

    def _delivery(self, i: Intent) -> DeliveryRow:
        text = i.text if len(i.text) <= TEXT_PREVIEW else i.text[:TEXT_PREVIEW] + "\u2026"
        return DeliveryRow(
            i.id,
            i.route.conversation_key,
            place(i.route.conversation_key, self._bridge.sessions.names()).where,
            i.kind,
            i.status,
            i.attempts,
            i.chunks_sent,
            text,
            i.last_error,
            i.created_at,
        )

    async def intent(self, workspace_id: str, delivery_id: str) -> Intent:
        found = await self._bridge.store.intent(delivery_id)
        if found is None or found.route.workspace_id != workspace_id:
            raise NotInWorkspace(f"workspace {workspace_id} has no delivery {delivery_id}")
        return found

    async def undelivered(self, workspace_id: str) -> list[Undelivered]:
        return await undelivered_notifications(
            self._runtime.store, self._bridge.store, workspace_id
        )

    async def overview(self, workspace: WorkspaceConfig) -> Overview:
        deliveries = await self._bridge.store.workspace_deliveries(workspace.id)
        failed = sum(1 for d in deliveries if d.status is DeliveryStatus.FAILED)
        return Overview(
            connections=self.connections(workspace),
            board=await read_board(self._bridge, workspace.id),
            failed_deliveries=failed,
            pending_deliveries=len(deliveries) - failed,
            undelivered_notifications=len(await self.undelivered(workspace.id)),
            actions=await self._bridge.store.admin_actions(workspace.id),
        )
