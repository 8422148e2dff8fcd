"""Where a session's output goes (DESIGN §3, Routes), in order:
1. the reply route of the message that started the current turn, while its platform runs;
2. the session's own conversation;
3. the primary operator's DM on their preferred platform;
4. nowhere: the caller keeps the output stored and says so.
A private child always resolves through its parent's session."""

from __future__ import annotations

from collections.abc import Container

from bridge.platforms import Platforms
from bridge.sessions import Sessions
from bridge.types import Route
from config.current import CurrentConfig
from config.schema import OperatorConfig, WorkspaceConfig
from runtime.engine import Runtime
from runtime.messages import QueueEntry


class Router:
    def __init__(
        self,
        config: CurrentConfig,
        runtime: Runtime,
        sessions: Sessions,
        platforms: Platforms,
        failed: Container[str],
    ) -> None:
        self._config = config
        self._runtime = runtime
        self._sessions = sessions
        self._platforms = platforms  # the running ones, in the order they were attached
        self._failed = failed

    async def resolve(
        self, session_id: str, run_id: str | None, first: QueueEntry | None = None
    ) -> Route | None:
        """`first`: the run's first message, when the caller has read it already (it is
        read here unless it is of the run the route is resolved for)."""
        session_id, run_id = await self._supervising(session_id, run_id)
        trigger = await self._trigger_route(run_id, first) if run_id else None
        if trigger is not None and self._usable(trigger):
            return trigger
        own = self._sessions.route_of(session_id)
        if own is not None and self._usable(own):
            return own
        workspace = self.workspace_of_session(session_id)
        fallback = self.primary_route(workspace) if workspace else None
        return fallback if fallback is not None and self._usable(fallback) else None

    async def _supervising(self, session_id: str, run_id: str | None) -> tuple[str, str | None]:
        """A private child's output goes where its parent's would, for the parent's turn."""
        record = self._runtime.session(session_id)
        if record.parent_session_id is None:
            return session_id, run_id
        parent_run = await self._runtime.store.latest_run(record.parent_session_id)
        return record.parent_session_id, parent_run.id if parent_run else None

    async def _trigger_route(self, run_id: str, first: QueueEntry | None) -> Route | None:
        if first is None or first.run_id != run_id:
            first = await self._runtime.store.first_message_of_run(run_id)
        route = first.message.provenance.reply_route if first else None
        return Route.model_validate(route) if route else None

    def has_buttons(self, route: Route) -> bool:
        """Whether messages to `route` show buttons (else a notice names their commands)."""
        profile = self._platforms.profile(route.platform)
        return profile is None or profile.limits.buttons

    def _usable(self, route: Route) -> bool:
        workspace = self._workspace_of(route)
        profile = self._platforms.profile(route.platform)
        if workspace is None or profile is None:
            return False
        if route.home.conversation_key in self._failed:
            return False  # the platform refused it (bot blocked or removed)
        return profile.serves(workspace)

    def _workspace_of(self, route: Route | None) -> WorkspaceConfig | None:
        if route is None:
            return None
        return self._config.workspace(route.workspace_id)

    def primary_route(self, workspace: WorkspaceConfig) -> Route | None:
        """A DM to the primary operator: on the platform they prefer, else on the first
        running platform of the workspace where they have one."""
        return self.operator_route(workspace, workspace.primary_operator())

    def operator_route(self, workspace: WorkspaceConfig, operator: OperatorConfig) -> Route | None:
        """A DM to `operator`, as `primary_route` finds one for the primary operator."""
        names = self._platforms.names()
        if operator.notify_via in names:
            names.remove(operator.notify_via)
            names.insert(0, operator.notify_via)
        for name in names:
            profile = self._platforms.profile(name)
            if profile is None or not profile.serves(workspace):
                continue
            conversation = profile.direct_conversation(workspace, operator)
            if conversation is not None:
                return Route(platform=name, workspace_id=workspace.id, conversation_id=conversation)
        return None

    def workspace_of_session(self, session_id: str) -> WorkspaceConfig | None:
        agent = self._runtime.session(session_id).agent_id
        workspace_id = agent.split("/", 1)[0]
        return self._config.workspace(workspace_id)
