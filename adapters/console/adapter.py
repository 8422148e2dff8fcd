"""A chat in the terminal: what the operator types are messages to the bridge, and the
transport prints what comes back. In a terminal a line editor reads them (`editor`), while
the agent works too; from a pipe or a file, each line is one message (`lines`)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from enum import Enum
from pathlib import Path
from typing import TextIO

from adapters.console.lines import is_terminal, read_lines
from adapters.console.profile import CONVERSATION, NAME
from adapters.console.transport import ConsoleTransport
from bridge import Bridge, InboundChat, Route
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)

HISTORY_FILE = "console_history"  # in the data folder, beside the database
NOT_TAKEN = (
    "switchboard> That message could not be taken ({error}); the log says why. Send it again."
)


class Ending(Enum):
    """How the operator left the chat."""

    SETTLE = "settle"  # Ctrl-D, the input's end, Ctrl-C with nothing running: the agent finishes
    NOW = "now"  # Ctrl-C again while the turn still runs: stop now; it resumes on the next start


class ConsoleAdapter:
    def __init__(
        self,
        bridge: Bridge,
        workspace: WorkspaceConfig,
        stdin: TextIO,
        transport: ConsoleTransport,
        *,
        data_dir: Path | None = None,
    ) -> None:
        assert workspace.console is not None
        self._bridge = bridge
        self._operator = workspace.console.operator
        self._route = Route(platform=NAME, workspace_id=workspace.id, conversation_id=CONVERSATION)
        self._stdin = stdin
        self._transport = transport
        self._history = data_dir / HISTORY_FILE if data_dir is not None else None
        self._boot = uuid.uuid4().hex[:12]  # dedupe keys are unique per process run
        self._number = 0
        self._typed: asyncio.Queue[str] = asyncio.Queue()
        self._stop_asked: str | None = None  # the run Ctrl-C asked to stop
        self._ending = Ending.SETTLE

    async def run(self) -> Ending:
        """Read messages until the operator leaves: Ctrl-D, the end of piped input, or Ctrl-C
        when no turn runs here (else Ctrl-C stops the turn, as /stop does)."""
        screen = self._transport.screen
        if not is_terminal(self._stdin, screen.out):
            await read_lines(self._stdin, self._receive)
            return Ending.SETTLE
        # prompt_toolkit only in a terminal: a piped or served process never pays its import.
        from adapters.console.editor import edit_lines, history

        # Typed messages go to the bridge in order, while the editor takes the next one.
        sending = asyncio.get_running_loop().create_task(self._send_typed(), name="console-in")
        try:
            remembered = history(self._history)
            await edit_lines(
                self._stdin, screen, remembered, self._typed.put_nowait, self._interrupted
            )
            if self._ending is Ending.SETTLE:
                await self._typed.join()
        finally:
            sending.cancel()
        return self._ending

    def _interrupted(self) -> bool:
        """Ctrl-C: whether to quit. A turn running here is stopped first (the message /stop
        is sent); a second Ctrl-C while it still runs quits at once."""
        run_id = self._transport.running(self._route)
        if run_id is None:
            return True
        if run_id != self._stop_asked:
            self._stop_asked = run_id
            self._typed.put_nowait("/stop")
            return False
        self._ending = Ending.NOW
        return True

    async def _send_typed(self) -> None:
        while True:
            text = await self._typed.get()
            try:
                await self._receive(text)
            except Exception as exc:  # the store failed: the operator may send it again
                log.exception("a console message was not taken", extra={"chars": len(text)})
                self._transport.screen.print(NOT_TAKEN.format(error=type(exc).__name__))
            finally:
                self._typed.task_done()

    async def _receive(self, text: str) -> None:
        self._number += 1
        await self._bridge.receive(
            InboundChat(
                route=self._route,
                sender_id=self._operator,
                is_direct=True,
                dedupe_keys=(f"{self._boot}:{self._number}",),
                text=text,
                message_ref=f"line {self._number}",
            )
        )
