"""Every workspace's bots, one per platform that serves it (`adapters/platforms.py`), started
and stopped one workspace at a time, so that a reload restarts the workspaces it changes and
no other. Nothing here names a platform."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from adapters.bots import Bot, PlatformKind
from adapters.hooks.decoder import HooksDecoder
from adapters.hooks.door import PLATFORM
from adapters.intake.record import Decoder, NotReady, Put
from adapters.platforms import platforms
from adapters.server.workspaces import FilesPerWorkspace, PerWorkspace
from bridge.service import Bridge
from bridge.store.records import StoredRequest
from config.errors import ConfigError, PlatformUnreachable
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)


class PlatformBots:
    """One platform's bots, by workspace, and what the bridge and the replay see of them."""

    def __init__(self, kind: PlatformKind, bridge: Bridge) -> None:
        self.kind = kind
        self.name = kind.name
        self.bots: dict[str, Bot] = {}
        # Stopped bots of workspaces still configured (restarting, or they did not start):
        # what was stored for them waits until a bot of theirs runs again.
        self.stopped: dict[str, Bot] = {}
        # One transport and one file source a platform, for the bridge: a workspace's bot
        # goes in and out of their maps as it is added, restarted or removed.
        self.transport = PerWorkspace(kind.profile, bridge.metrics, self.serves)
        self.files = FilesPerWorkspace(kind.name, kind.max_file_bytes)
        self._current = bridge.current
        self.attached = False

    def serves(self, workspace_id: str) -> bool:
        workspace = self._current.workspace(workspace_id)
        return workspace is not None and self.kind.profile.serves(workspace)

    async def decode(self, request: StoredRequest) -> None:
        """The replay's way to this platform: the workspace's bot, or a wait for it."""
        bot = self.bots.get(request.workspace_id) or self.stopped.get(request.workspace_id)
        if bot is None:
            log.warning(
                "stored request for a workspace no longer served; dropped",
                extra={"platform": self.name, "workspace": request.workspace_id},
            )
            return
        if not bot.running:
            raise NotReady(f"workspace {request.workspace_id}'s {self.name} bot is not running")
        await bot.decode(request)


class LiveAdapters:
    def __init__(self, bridge: Bridge, put: Put) -> None:
        """`put` stores what comes in over a connection a bot opens (Socket Mode)."""
        self._bridge = bridge
        self._put = put
        self.platforms = {p.name: PlatformBots(p.bots(), bridge) for p in platforms()}
        # What the replay hands stored requests to, by platform name; signed events of
        # triggers go to the bridge's triggers.
        self.decoders: dict[str, Decoder] = {**self.platforms, PLATFORM: HooksDecoder(bridge)}

    def bots(self, platform: str) -> dict[str, Bot]:
        """The platform's running bots, by workspace id."""
        return self.platforms[platform].bots

    def workspaces(self) -> list[str]:
        """Every workspace with a bot, on any platform."""
        return list(dict.fromkeys(w for p in self.platforms.values() for w in p.bots))

    def add_all(self, workspaces: Iterable[WorkspaceConfig]) -> None:
        """At start: the platforms in their order (`adapters/platforms.py`: where an
        operator has both, a notification goes to the first), then every workspace's bots."""
        workspaces = list(workspaces)
        for platform in self.platforms.values():
            if any(platform.kind.profile.serves(w) for w in workspaces):
                self._attach(platform)
        for workspace in workspaces:
            self.add(workspace)

    def add(self, workspace: WorkspaceConfig) -> None:
        """Build the workspace's bots (not started); the bridge sends through them."""
        metrics = self._bridge.metrics
        for platform in self.platforms.values():
            if platform.kind.profile.serves(workspace):
                bot = platform.kind.bot(self._bridge, workspace, self._put)
                platform.bots[workspace.id] = bot
                platform.transport.by_workspace[workspace.id] = bot.transport
                if bot.files is not None:
                    platform.files.by_workspace[workspace.id] = bot.files
                metrics.connection(platform.name, workspace.id, up=False)
                self._attach(platform)
            platform.stopped.pop(workspace.id, None)

    def _attach(self, platform: PlatformBots) -> None:
        """A platform's transport goes to the bridge with its first workspace."""
        if not platform.attached:
            platform.attached = True
            self._bridge.attach(platform.transport)
            self._bridge.attach_files(platform.files)

    async def start(self, workspace_id: str, public_url: str | None) -> None:
        """Start the workspace's bots, in the platforms' order."""
        for platform in self.platforms.values():
            if (bot := platform.bots.get(workspace_id)) is not None:
                try:
                    await bot.start(public_url)
                except Exception as exc:  # said in /status, `switchboard status`, the console
                    said = f"{type(exc).__name__}: {exc}"[:300]
                    self._bridge.metrics.platform_call_failed(platform.name, workspace_id, said)
                    raise
                self._bridge.metrics.connection(platform.name, workspace_id, up=True)

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
                await self.start(workspace_id, public_url)
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
        """Stop the workspace's bots; they stay in the maps (see `remove`)."""
        for platform in self.platforms.values():
            if (bot := platform.bots.get(workspace_id)) is None:
                continue
            try:
                await bot.stop()
            except Exception:  # one that never started, or a connection that fails to close
                log.warning(
                    "bot stopped uncleanly",
                    exc_info=True,
                    extra={"platform": platform.name, "workspace": workspace_id},
                )
            self._bridge.metrics.connection(platform.name, workspace_id, up=False)

    def hold(self, workspace_id: str, held: bool) -> None:
        """While a reload restarts the workspace's bots, sends and downloads for it are
        tried again a little later instead of going through a stopped bot."""
        for platform in self.platforms.values():
            for place in (platform.transport.restarting, platform.files.restarting):
                if held:
                    place.add(workspace_id)
                else:
                    place.discard(workspace_id)

    def remove(self, workspace_id: str) -> None:
        """Take the (stopped) workspace's bots out of every map; what is stored for a
        workspace still configured waits for its next bot, the rest is dropped."""
        for platform in self.platforms.values():
            if (bot := platform.bots.pop(workspace_id, None)) is not None:
                platform.stopped[workspace_id] = bot
                self._bridge.metrics.forget_connection(platform.name, workspace_id)
            platform.transport.by_workspace.pop(workspace_id, None)
            platform.files.by_workspace.pop(workspace_id, None)
        self.decode()

    def decode(self) -> None:
        """Forget the stopped bots of workspaces no longer configured for their platform."""
        for platform in self.platforms.values():
            for workspace_id in [w for w in platform.stopped if not platform.serves(w)]:
                del platform.stopped[workspace_id]
