"""One bridge transport per platform, sending through each workspace's own bot: the bridge
sees one Slack and one Telegram, while every workspace keeps its own token."""

from __future__ import annotations

from bridge import DeliveryError, DeliveryKind, PlatformProfile, ProgressView, Route, Transport
from bridge.metrics import Metrics
from bridge.transport import Budget, LiveMessages


class PerWorkspace:
    def __init__(self, profile: PlatformProfile, metrics: Metrics | None = None) -> None:
        self.profile = profile
        self.by_workspace: dict[str, Transport] = {}
        self._metrics = metrics

    def _ok(self, workspace_id: str) -> None:
        """The platform answered this workspace's bot: the last-success gauge moves on."""
        if self._metrics is not None:
            self._metrics.platform_call_ok(self.profile.name, workspace_id)

    async def send(
        self, route: Route, text: str, *, kind: DeliveryKind, intent_id: str, chunk: int
    ) -> None:
        bot = self.by_workspace.get(route.workspace_id)
        if bot is None:
            raise DeliveryError(
                f"no {self.profile.name} bot runs for workspace {route.workspace_id}",
                retryable=False,
            )
        await bot.send(route, text, kind=kind, intent_id=intent_id, chunk=chunk)
        self._ok(route.workspace_id)

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        # Not a success signal: transports swallow progress errors (best effort).
        bot = self.by_workspace.get(route.workspace_id)
        if bot is not None:
            await bot.show_progress(route, view, budget)

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        bot = self.by_workspace.get(route.workspace_id)
        if bot is None:
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
