"""One bridge transport per platform, sending through each workspace's own bot: the bridge
sees one Slack and one Telegram, while every workspace keeps its own token."""

from __future__ import annotations

from collections.abc import Callable

from bridge.attachments.source import FetchError, FileSource
from bridge.metrics import Metrics
from bridge.platform import PlatformProfile
from bridge.transport import (
    Budget,
    DeliveryError,
    LiveMessages,
    Post,
    ProgressView,
    Rewriting,
    ThreadReader,
    Transport,
)
from bridge.types import InboundFile, Quoted, Route


class PerWorkspace:
    def __init__(
        self,
        profile: PlatformProfile,
        metrics: Metrics | None = None,
        configured: Callable[[str], bool] = lambda workspace_id: False,
    ) -> None:
        self.profile = profile
        self.by_workspace: dict[str, Transport] = {}
        # Workspaces whose bot a reload is restarting: sends are tried again shortly.
        self.restarting: set[str] = set()
        self._metrics = metrics
        self._configured = configured  # whether the workspace has this platform configured

    def _ok(self, workspace_id: str) -> None:
        """The platform answered this workspace's bot: the last-success gauge moves on."""
        if self._metrics is not None:
            self._metrics.platform_call_ok(self.profile.name, workspace_id)

    async def send(self, post: Post) -> str | None:
        bot = self._bot(post.route)
        try:
            posted = await bot.send(post)
        except DeliveryError as exc:
            self._failed(post.route, exc)
            raise
        self._ok(post.route.workspace_id)
        return posted

    async def rewrite(self, post: Post, message_id: str) -> None:
        """The message rewritten in place by the workspace's bot, where its platform can."""
        bot = self._bot(post.route)
        if not isinstance(bot, Rewriting):
            raise DeliveryError(f"{self.profile.name} cannot rewrite a message", retryable=False)
        try:
            await bot.rewrite(post, message_id)
        except DeliveryError as exc:
            self._failed(post.route, exc)
            raise
        self._ok(post.route.workspace_id)

    def _failed(self, route: Route, exc: DeliveryError) -> None:
        if self._metrics is not None:
            self._metrics.platform_call_failed(self.profile.name, route.workspace_id, str(exc))

    def _bot(self, route: Route) -> Transport:
        """The workspace's bot; DeliveryError (held) while it restarts or does not run."""
        where = f"the {self.profile.name} bot of workspace {route.workspace_id}"
        if route.workspace_id in self.restarting:
            raise DeliveryError(f"{where} is restarting (config reload)", retryable=True, held=True)
        bot = self.by_workspace.get(route.workspace_id)
        if bot is None and self._configured(route.workspace_id):  # kept until a bot runs
            raise DeliveryError(
                f"{where} is not running (it did not start: fix the config and reload it)",
                retryable=True,
                held=True,
            )
        if bot is None:
            raise DeliveryError(
                f"workspace {route.workspace_id} has no {self.profile.name} bot in the config "
                "any more",
                retryable=False,
            )
        return bot

    async def thread_context(self, route: Route, limit: int) -> list[Quoted]:
        """The thread's messages, where this workspace's bot can read threads (Slack)."""
        bot = self.by_workspace.get(route.workspace_id)
        if not isinstance(bot, ThreadReader):
            return []
        return await bot.thread_context(route, limit)

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        # Not a success signal: transports swallow progress errors (best effort).
        bot = self.by_workspace.get(route.workspace_id)
        if bot is not None and route.workspace_id not in self.restarting:
            await bot.show_progress(route, view, budget)

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        bot = self.by_workspace.get(route.workspace_id)
        if bot is None or route.workspace_id in self.restarting:
            return None
        landed = await bot.delivered(route, intent_id, chunk)
        if landed is not None:  # None: the platform was not asked (it cannot tell)
            self._ok(route.workspace_id)
        return landed

    def live_messages(self, route: Route) -> frozenset[str]:
        bot = self.by_workspace.get(route.workspace_id)
        return bot.live_messages(route) if isinstance(bot, LiveMessages) else frozenset()

    async def remove_live(self, route: Route, message_id: str) -> None:
        bot = self.by_workspace.get(route.workspace_id)
        if isinstance(bot, LiveMessages):
            await bot.remove_live(route, message_id)


class FilesPerWorkspace:
    """One file source per platform, downloading with each workspace's own bot."""

    def __init__(self, platform: str, max_bytes: int | None) -> None:
        self.platform = platform
        self.max_bytes = max_bytes
        self.by_workspace: dict[str, FileSource] = {}
        self.restarting: set[str] = set()

    def _source(self, workspace_id: str) -> FileSource:
        if workspace_id in self.restarting:
            raise FetchError(
                f"the {self.platform} bot of workspace {workspace_id} is restarting (config "
                "reload)",
                retryable=True,
            )
        source = self.by_workspace.get(workspace_id)
        if source is None:
            raise FetchError(
                f"no {self.platform} bot runs for workspace {workspace_id}", retryable=False
            )
        return source

    async def describe(self, workspace_id: str, file: InboundFile) -> InboundFile:
        return await self._source(workspace_id).describe(workspace_id, file)

    async def fetch(self, workspace_id: str, file: InboundFile, max_bytes: int) -> bytes:
        return await self._source(workspace_id).fetch(workspace_id, file, max_bytes)
