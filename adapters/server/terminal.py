"""The terminal chat of `switchboard run`: the first workspace whose `[console]` is enabled
talks to the agent in the terminal the process runs in."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TextIO

from adapters.console.adapter import ConsoleAdapter, Ending
from adapters.console.profile import CONSOLE
from adapters.console.transport import ConsoleTransport
from bridge.service import Bridge
from config.schema import WorkspaceConfig
from runtime.tasks import cancel_and_wait


class TerminalChat:
    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self._stdin = stdin
        self.transport = ConsoleTransport(stdout)
        self.reading: asyncio.Task[Ending] | None = None  # until the operator leaves

    @staticmethod
    def workspace(bridge: Bridge) -> WorkspaceConfig | None:
        return next((w for w in bridge.config.workspaces if w.console and w.console.enabled), None)

    def attach(self, bridge: Bridge) -> None:
        """The terminal is a platform of the bridge's (before the bots: see `add_all`)."""
        if self.workspace(bridge) is not None:
            bridge.attach(self.transport)

    def start(self, bridge: Bridge) -> None:
        """Read the terminal (once this process runs the turns)."""
        workspace = self.workspace(bridge)
        if workspace is None:
            return
        data_dir = Path(bridge.config.storage.path).parent  # its history is kept there
        chat = ConsoleAdapter(
            bridge,
            workspace,
            self._stdin,
            self.transport,
            working=bridge.runtime.busy,  # leaving then stops at once, as SIGTERM does
            data_dir=data_dir,
        )
        self.reading = asyncio.get_running_loop().create_task(chat.run(), name="console")
        metrics = bridge.metrics
        metrics.connection(CONSOLE.name, workspace.id, up=True)
        self.reading.add_done_callback(  # input ended, failed or was stopped
            lambda _: metrics.connection(CONSOLE.name, workspace.id, up=False)
        )

    async def stop(self) -> None:
        await cancel_and_wait(self.reading)

    def left_at_once(self) -> bool:
        """The operator left the terminal while the agent worked: stop without waiting for
        it, as on SIGTERM (its work resumes on the next start)."""
        reading = self.reading
        return (
            reading is not None
            and reading.done()
            and not reading.cancelled()
            and reading.exception() is None
            and reading.result() is Ending.NOW
        )
