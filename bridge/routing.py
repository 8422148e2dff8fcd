"""Where a session's output goes (DESIGN §3, Routes), in order:
1. the reply route of the message that started the current turn, while its platform runs;
2. the session's own conversation;
3. the primary operator's DM on their preferred platform;
4. nowhere: the caller keeps the output stored and says so.
A private child always resolves through its parent's session."""

from __future__ import annotations

import json
from collections.abc import Container

from bridge.sessions import Sessions
from bridge.types import Platform, Route
from config.schema import SwitchboardConfig, WorkspaceConfig
from runtime import Provenance, Runtime


class Router:
    def __init__(
        self,
        config: SwitchboardConfig,
        runtime: Runtime,
        sessions: Sessions,
        active: Container[Platform],
        failed: Container[str],
    ) -> None:
        self._config = config
        self._runtime = runtime
        self._sessions = sessions
        self._active = active
        self._failed = failed

    async def resolve(self, session_id: str, run_id: str | None) -> Route | None:
        session_id, run_id = await self._supervising(session_id, run_id)
        trigger = await self._trigger_route(run_id) if run_id else None
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
        parent_runs = await self._runtime.store.runs(session_id=record.parent_session_id)
        return record.parent_session_id, parent_runs[-1].id if parent_runs else None

    async def _trigger_route(self, run_id: str) -> Route | None:
        rows = await self._runtime.store.fetch_all(
            "SELECT provenance FROM messages WHERE run_id = ? ORDER BY seq LIMIT 1", (run_id,)
        )
        if not rows:
            return None
        route = Provenance.from_json(json.loads(rows[0]["provenance"])).reply_route
        return Route.model_validate(route) if route else None

    def _usable(self, route: Route) -> bool:
        workspace = self._workspace_of(route)
        if workspace is None or route.platform not in self._active:
            return False
        if route.home.conversation_key in self._failed:
            return False  # the platform refused it (bot blocked or removed)
        return getattr(workspace, route.platform.value) is not None

    def _workspace_of(self, route: Route | None) -> WorkspaceConfig | None:
        if route is None:
            return None
        return next((w for w in self._config.workspaces if w.id == route.workspace_id), None)

    def primary_route(self, workspace: WorkspaceConfig) -> Route | None:
        operator = workspace.primary_operator()
        preferred = [operator.notify_via] if operator.notify_via else []
        for platform in (*preferred, "console", "telegram", "slack"):
            if platform == "console" and workspace.console:
                return Route(
                    platform=Platform.CONSOLE, workspace_id=workspace.id, conversation_id="console"
                )
            if platform == "telegram" and workspace.telegram and operator.telegram_user_id:
                return Route(
                    platform=Platform.TELEGRAM,
                    workspace_id=workspace.id,
                    conversation_id=str(operator.telegram_user_id),
                )
            if platform == "slack" and workspace.slack and operator.slack_user_id:
                return Route(
                    platform=Platform.SLACK,
                    workspace_id=workspace.id,
                    conversation_id=operator.slack_user_id,
                )
        return None

    def workspace_of_session(self, session_id: str) -> WorkspaceConfig | None:
        agent = self._runtime.session(session_id).agent_id
        workspace_id = agent.split("/", 1)[0]
        return next((w for w in self._config.workspaces if w.id == workspace_id), None)
