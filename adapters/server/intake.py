"""Every way in for this process, on every topology: the intake (`adapters/intake/`: the
inbox file on SQLite, the shared table on PostgreSQL), the doors that store into it (in the
door process, or served here), what the platforms poll (there, or here), and the one replayer
that hands what was stored to the platforms' decoders.

On SQLite, `switchboard run` with `[server] intake = "process"` (the default) moves the doors
and the polling into a process of their own (`adapters/doors/`): it owns the port, and this
process serves everything else on a Unix socket behind it."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path

from aiohttp import web

from adapters.doors.doors import Doors, door_keys
from adapters.doors.keeper import DoorProcess, DoorsFailed
from adapters.intake.inbox import inbox_path
from adapters.intake.local import LocalIntake
from adapters.intake.record import Decoder
from adapters.intake.replay import Replayer
from adapters.intake.shared import SharedIntake
from bridge.parts import Part
from bridge.service import Bridge
from config.errors import ConfigError
from config.schema import SwitchboardConfig


def wanted(config: SwitchboardConfig) -> bool:
    """The doors get their own process: asked for, the store is a file of this process, and
    the config at start has a platform door or a bot to poll (a console-only one has none; a
    workspace a reload adds then is served here). Replicas on PostgreSQL keep the doors in
    each replica's process: there a request is acknowledged once the shared database has it,
    so it outlives the machine that took it, which a local inbox would not."""
    storage = config.storage
    return (
        config.server.intake == "process"
        and not storage.shared
        and storage.path != ":memory:"
        and bool(door_keys(config))
    )


class WayIn:
    def __init__(
        self,
        config: SwitchboardConfig,
        bridge: Bridge,
        polling_failed: Callable[[str, str, str], None],
        *,
        door_process: bool,
        doors_failing: Callable[[int, str], None] = lambda failures, why: None,
    ) -> None:
        """`polling_failed` hears of each failed poll (the platform, the workspace, the
        error); `doors_failing`, once for each run of failures, that the door process keeps
        failing to start (how many times in a row, the last error)."""
        self._scratch = Path(tempfile.mkdtemp(prefix="switchboard-"))  # sockets, a memory inbox
        self._shared: SharedIntake | None = None
        self._local: LocalIntake | None = None
        self.intake: SharedIntake | LocalIntake
        if config.storage.shared:
            self.intake = self._shared = SharedIntake(bridge)
        else:
            stored = config.storage.path
            path = self._scratch / "inbox" if stored == ":memory:" else inbox_path(Path(stored))
            self.intake = self._local = LocalIntake(path, lambda _: self.replayer.wake())
        self._placement = bridge.placement
        self.replayer = Replayer(self.intake, bridge.placement)
        self._polling_failed = polling_failed
        self._doors_failing = doors_failing
        self.separate = door_process and wanted(config)  # the door process serves the doors
        self._process: DoorProcess | None = None
        # The doors: routed on this process's own port (none behind a door process); polled
        # where turns run, when the door process does not.
        self._doors = Doors(door_keys(config), self.intake.put, polling_failed)

    def doors(self) -> Doors | None:
        """The doors this process serves on its own port (none behind a door process)."""
        return None if self.separate else self._doors

    async def open(self, runner: web.AppRunner, config: SwitchboardConfig) -> int:
        """Serve `runner` behind the door process; the port the door process listens on."""
        assert self.separate and self._local is not None
        upstream = self._scratch / "http.sock"
        await web.UnixSite(runner, str(upstream)).start()
        server = config.server
        self._process = DoorProcess(
            inbox=self._local.path,
            upstream=upstream,
            host=server.host,
            port=server.port,
            keys=door_keys(config),
            on_stored=self.replayer.wake,
            on_polling_failed=self._polling_failed,
            on_failing=self._doors_failing,
        )
        self._local.write_through(self._process.tell)  # it alone writes the inbox file
        try:
            port = await self._process.start()
        except DoorsFailed as exc:
            self._process = None
            raise ConfigError(
                f"cannot listen on {server.host}:{server.port} ({exc}); is another Switchboard "
                "running? Set [server] port in the config to use another port."
            ) from None
        return port

    def replay(self, decoders: Mapping[str, Decoder]) -> Part:
        """Where this process runs the turns (single, or the active replica), what was stored
        (and what was stored before a stop) is handed on to `decoders` (by platform name)."""
        return Part("replay", run=lambda: self._replaying(decoders))

    @contextlib.asynccontextmanager
    async def _replaying(self, decoders: Mapping[str, Decoder]) -> AsyncIterator[None]:
        self.replayer.start(decoders)
        if self._shared is not None:
            self._shared.watch(self.replayer.wake)
        yield
        await self.replayer.close()

    def serving(self, serve: Callable[[], Awaitable[None]]) -> Part:
        """The doors: served from `serve` on (it starts the door process, if any), polled
        where the turns run (the bots the door process does not poll), given the keys of each
        config applied. At the stop no request is taken any more; what was stored stays for
        the next start."""
        return Part(
            "doors",
            lambda: self._serving(serve),
            self._polling,
            lambda change: self._update(change.after),
        )

    @contextlib.asynccontextmanager
    async def _serving(self, serve: Callable[[], Awaitable[None]]) -> AsyncIterator[None]:
        await serve()
        yield
        if self._process is not None:
            await self._process.stop()
            self._process = None

    @contextlib.asynccontextmanager
    async def _polling(self) -> AsyncIterator[None]:
        if not self.separate:
            self._doors.poll(self._placement)
        yield
        await self._doors.close()

    async def serve(self, workspace_id: str) -> None:
        """Replicas: the workspace is served here now: its bots polled, what its doors
        stored (here or on any replica) replayed."""
        await self._doors.poll_again()
        self.replayer.read_again()

    async def leave(self, workspace_id: str) -> None:
        """Replicas: no longer served here: its polling stops, what was read for it goes
        back to the intake for the replica serving it."""
        await self._doors.poll_again()
        await self.replayer.leave(workspace_id)

    def _update(self, config: SwitchboardConfig) -> None:
        keys = door_keys(config)
        self._doors.update(keys)
        if self._process is not None:
            self._process.update(keys)

    async def close(self) -> None:
        """After the bots (what they put in while stopping is kept), the replay and the
        doors stopped before them."""
        if self._shared is not None:
            await self._shared.close()
        if self._local is not None:
            self._local.close()
        with contextlib.suppress(OSError):
            shutil.rmtree(self._scratch)
