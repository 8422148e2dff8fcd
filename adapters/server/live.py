"""Every workspace's Slack and Telegram adapters, started and stopped one workspace at a time,
so that a reload restarts the workspaces it changes and no other."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable

from adapters.intake.record import Decoder, Put
from adapters.server.workspaces import FilesPerWorkspace, PerWorkspace
from adapters.slack.adapter import SlackAdapter
from adapters.slack.decoder import SlackDecoder
from adapters.slack.files import SlackFiles
from adapters.slack.platform import SLACK
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.decoder import TelegramDecoder
from adapters.telegram.files import TelegramFiles
from adapters.telegram.platform import TELEGRAM
from bridge import Bridge
from config.errors import ConfigError, PlatformUnreachable
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)


class LiveAdapters:
    def __init__(self, bridge: Bridge, put: Put) -> None:
        """`put` stores what comes in over a connection an adapter opens (Socket Mode)."""
        self._bridge = bridge
        self._put = put
        metrics = bridge.metrics
        self.telegram: dict[str, TelegramAdapter] = {}
        self.slack: dict[str, SlackAdapter] = {}
        # One transport and one file source a platform, for the bridge: a workspace's bot
        # goes in and out of their maps as it is added, restarted or removed.
        self.bots = PerWorkspace(TELEGRAM, metrics, self._has_telegram)
        self.bot_files = FilesPerWorkspace(TELEGRAM.name, TelegramFiles.max_bytes)
        self.teams = PerWorkspace(SLACK, metrics, self._has_slack)
        self.team_files = FilesPerWorkspace(SLACK.name, SlackFiles.max_bytes)
        self.slack_decoder = SlackDecoder()
        self.telegram_decoder = TelegramDecoder()
        # What the replay hands stored requests to, by platform name.
        self.decoders: dict[str, Decoder] = {
            SLACK.name: self.slack_decoder,
            TELEGRAM.name: self.telegram_decoder,
        }
        self._attached: set[str] = set()
        # Stopped adapters of workspaces still configured (restarting, or their bot did not
        # start): what was stored for them waits until their bot runs again.
        self._stopped_slack: dict[str, SlackAdapter] = {}
        self._stopped_telegram: dict[str, TelegramAdapter] = {}

    def _has_telegram(self, workspace_id: str) -> bool:
        workspace = self._bridge.current.workspace(workspace_id)
        return workspace is not None and workspace.telegram is not None

    def _has_slack(self, workspace_id: str) -> bool:
        workspace = self._bridge.current.workspace(workspace_id)
        return workspace is not None and workspace.slack is not None

    def add_all(self, workspaces: Iterable[WorkspaceConfig]) -> None:
        """At start: the platforms in a fixed order (Telegram, then Slack: where an operator
        has both, a notification goes to the first), then every workspace's adapters."""
        workspaces = list(workspaces)
        if any(w.telegram for w in workspaces):
            self._attach(self.bots, self.bot_files)
        if any(w.slack for w in workspaces):
            self._attach(self.teams, self.team_files)
        for workspace in workspaces:
            self.add(workspace)

    def add(self, workspace: WorkspaceConfig) -> None:
        """Build the workspace's adapters (not started); the bridge sends through them."""
        metrics = self._bridge.metrics
        if workspace.telegram is not None:
            bot = self.telegram[workspace.id] = TelegramAdapter(self._bridge, workspace)
            self.bots.by_workspace[workspace.id] = bot.transport
            self.bot_files.by_workspace[workspace.id] = bot.files
            metrics.connection(TELEGRAM.name, workspace.id, up=False)
            self._attach(self.bots, self.bot_files)
        if workspace.slack is not None:
            team = self.slack[workspace.id] = SlackAdapter(self._bridge, workspace, self._put)
            self.teams.by_workspace[workspace.id] = team.transport
            self.team_files.by_workspace[workspace.id] = team.files
            metrics.connection(SLACK.name, workspace.id, up=False)
            self._attach(self.teams, self.team_files)
        self._stopped_slack.pop(workspace.id, None)
        self._stopped_telegram.pop(workspace.id, None)
        self.decode()

    def decode(self) -> None:
        """The decoders after a change: every adapter, and the stopped ones of workspaces
        still configured for their platform (what is stored for them waits for their bot)."""
        for stopped, configured in (
            (self._stopped_slack, self._has_slack),
            (self._stopped_telegram, self._has_telegram),
        ):
            for workspace_id in [w for w in stopped if not configured(w)]:
                del stopped[workspace_id]
        self.slack_decoder.update({**self._stopped_slack, **self.slack}.values())
        self.telegram_decoder.update({**self._stopped_telegram, **self.telegram}.values())

    def _attach(self, transport: PerWorkspace, files: FilesPerWorkspace) -> None:
        """A platform's transport goes to the bridge with its first workspace."""
        if transport.profile.name not in self._attached:
            self._attached.add(transport.profile.name)
            self._bridge.attach(transport)
            self._bridge.attach_files(files)

    async def start_slack(self, workspace_id: str) -> None:
        if (team := self.slack.get(workspace_id)) is not None:
            await team.start()
            self._bridge.metrics.connection(SLACK.name, workspace_id, up=True)

    async def start_telegram(self, workspace_id: str, public_url: str | None) -> None:
        if (bot := self.telegram.get(workspace_id)) is not None:
            await bot.start(public_url)
            self._bridge.metrics.connection(TELEGRAM.name, workspace_id, up=True)

    async def restart(
        self, workspace: WorkspaceConfig, public_url: str | None, *, serve: bool
    ) -> str | None:
        """Add the (changed or added) workspace and, where this process `serve`s (a standby
        starts no bot: its doors store for the active one), start its bots, held meanwhile.
        What went wrong if one did not start: then none runs for it until a reload fixes it."""
        workspace_id = workspace.id
        self.hold(workspace_id, True)
        self.add(workspace)
        failure: str | None = None
        if not serve:
            self.hold(workspace_id, False)
            return None
        try:
            try:
                await self.start_slack(workspace_id)
                await self.start_telegram(workspace_id, public_url)
            except (ConfigError, PlatformUnreachable) as exc:  # refused, or not reached
                failure = str(exc)
            except Exception as exc:  # a connection that failed otherwise (Socket Mode, ...)
                log.exception("workspace did not start", extra={"workspace": workspace_id})
                failure = f"workspace {workspace_id}: its bot did not start ("
                failure += f"{type(exc).__name__}: {str(exc)[:300]}); see the log"
            if failure is not None:
                await self.stop(workspace_id)
                self.remove(workspace_id)
        finally:
            self.hold(workspace_id, False)
        return failure

    async def stop(self, workspace_id: str) -> None:
        """Stop the workspace's adapters; they stay in the maps (see `remove`)."""
        if (bot := self.telegram.get(workspace_id)) is not None:
            with contextlib.suppress(Exception):  # a bot that never started has nothing to stop
                await bot.stop()
            self._bridge.metrics.connection(TELEGRAM.name, workspace_id, up=False)
        if (team := self.slack.get(workspace_id)) is not None:
            try:
                await team.stop()
            except Exception:  # a Socket Mode connection that fails to close: it is gone
                log.warning("slack workspace stopped uncleanly", exc_info=True)
            self._bridge.metrics.connection(SLACK.name, workspace_id, up=False)

    def hold(self, workspace_id: str, held: bool) -> None:
        """While a reload restarts the workspace's bots, sends and downloads for it are
        tried again a little later instead of going through a stopped bot."""
        for place in (self.bots, self.bot_files, self.teams, self.team_files):
            if held:
                place.restarting.add(workspace_id)
            else:
                place.restarting.discard(workspace_id)

    def remove(self, workspace_id: str) -> None:
        """Take the (stopped) workspace's adapters out of every map."""
        if (bot := self.telegram.pop(workspace_id, None)) is not None:
            self._stopped_telegram[workspace_id] = bot
            self._bridge.metrics.forget_connection(TELEGRAM.name, workspace_id)
        if (team := self.slack.pop(workspace_id, None)) is not None:
            self._stopped_slack[workspace_id] = team
            self._bridge.metrics.forget_connection(SLACK.name, workspace_id)
        for place in (self.bots, self.teams):
            place.by_workspace.pop(workspace_id, None)
        for source in (self.bot_files, self.team_files):
            source.by_workspace.pop(workspace_id, None)
        self.decode()
