"""The doors in a process of their own (`adapters/doors/`), as `switchboard run` starts them
on SQLite with `[server] intake = "process"` (the default): the door process owns the port
and polls Telegram for the bots in polling mode, and this process serves everything else on
a Unix socket behind it and takes the requests and updates the door process stored, through
the platforms' fronts, as fast as it can."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from adapters.doors.keeper import DoorProcess, DoorsFailed, door_keys
from adapters.doors.store import InboxReader, inbox_path
from bridge.forwarding import Replay, Replaying
from config.errors import ConfigError
from config.schema import SwitchboardConfig

MAIN_NICE = 5  # how much lower this process's priority is than the door process's


def wanted(config: SwitchboardConfig) -> bool:
    """The doors get their own process: asked for, the store is a file of this process, and
    the config at start has a platform door or a bot to poll (a console-only one has none; a
    workspace a reload adds then is served inline). Replicas on PostgreSQL keep the doors in
    each replica's process: there a request is acknowledged once the shared database has it,
    so it outlives the machine that took it, which a local inbox would not."""
    storage = config.storage
    keys = door_keys(config)
    return (
        config.server.intake == "process"
        and not storage.shared
        and storage.path != ":memory:"
        and any(keys.values())
    )


class DoorIntake:
    def __init__(self, config: SwitchboardConfig) -> None:
        self._inbox_path = inbox_path(Path(config.storage.path))
        self._inbox = InboxReader(self._inbox_path)
        self.replaying = Replaying(self._inbox, "inbox-replay")
        self._sockets = Path(tempfile.mkdtemp(prefix="switchboard-"))
        self._process: DoorProcess | None = None

    async def open(
        self,
        runner: web.AppRunner,
        config: SwitchboardConfig,
        polling_failed: Callable[[str, str], None],
    ) -> int:
        """Serve `runner` behind the door process; the port the door process listens on.
        `polling_failed` hears of each failed getUpdates (the workspace, the error)."""
        upstream = self._sockets / "http.sock"
        await web.UnixSite(runner, str(upstream)).start()
        server = config.server
        self._process = DoorProcess(
            inbox=self._inbox_path,
            upstream=upstream,
            host=server.host,
            port=server.port,
            keys=door_keys(config),
            on_stored=self.replaying.wake,
            on_polling_failed=polling_failed,
        )
        try:
            port = await self._process.start()
        except DoorsFailed as exc:
            self._process = None
            raise ConfigError(
                f"cannot listen on {server.host}:{server.port} ({exc}); is another Switchboard "
                "running? Set [server] port in the config to use another port."
            ) from None
        # When both want the CPU, the doors get it first: acknowledgements stay fast, turns
        # fall behind. (This thread's, on Linux; the door process is started from one of its
        # own, made before, so one started again after a crash keeps its priority.)
        os.nice(MAIN_NICE)
        return port

    def take(self, replayers: dict[str, Replay]) -> None:
        """Hand what the door process stores (and what it stored before a stop) to the
        platforms' fronts, `replayers` by platform name."""
        self.replaying.start(replayers)

    def update(self, config: SwitchboardConfig) -> None:
        if self._process is not None:
            self._process.update(door_keys(config))

    async def close_doors(self) -> None:
        """No request is taken any more; what was stored stays for the next start."""
        if self._process is not None:
            await self._process.stop()
            self._process = None

    async def close(self) -> None:
        await self.close_doors()
        await self.replaying.close()
        self._inbox.close()
        shutil.rmtree(self._sockets, ignore_errors=True)
