"""One bridge transport per platform, sending through each workspace's own bot: the bridge
sees one Slack and one Telegram, while every workspace keeps its own token."""

from __future__ import annotations

from bridge import DeliveryError, DeliveryKind, Platform, ProgressView, Route, Transport
from bridge.types import TransportLimits


class PerWorkspace:
    def __init__(self, platform: Platform, limits: TransportLimits) -> None:
        self.platform = platform
        self.limits = limits
        self.by_workspace: dict[str, Transport] = {}

    async def send(
        self, route: Route, text: str, *, kind: DeliveryKind, intent_id: str, chunk: int
    ) -> None:
        bot = self.by_workspace.get(route.workspace_id)
        if bot is None:
            raise DeliveryError(
                f"no {self.platform} bot runs for workspace {route.workspace_id}", retryable=False
            )
        await bot.send(route, text, kind=kind, intent_id=intent_id, chunk=chunk)

    async def show_progress(self, route: Route, view: ProgressView | None) -> None:
        bot = self.by_workspace.get(route.workspace_id)
        if bot is not None:
            await bot.show_progress(route, view)

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        bot = self.by_workspace.get(route.workspace_id)
        return None if bot is None else await bot.delivered(route, intent_id, chunk)
