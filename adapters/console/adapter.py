"""A chat in the terminal: what the operator types are messages to the bridge, and the
transport prints what comes back. In a terminal a line editor reads them (`editor`), while
the agent works too; from a pipe or a file, each line is one message (`lines`)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TextIO

from adapters.console.keys import AtCtrlC, Verdict, on_ctrl_c
from adapters.console.lines import is_terminal, read_lines
from adapters.console.profile import CONVERSATION, NAME
from adapters.console.transport import ConsoleTransport
from bridge.service import Bridge
from bridge.types import InboundChat, Route
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)

HISTORY_FILE = "console_history"  # in the data folder, beside the database
NOT_TAKEN = (
    "switchboard> That message could not be taken ({error}); the log says why. Send it again."
)
HOW_TO_QUIT = "switchboard> Press Ctrl-C again or Ctrl-D to quit."
QUITTING = "switchboard> Quitting now; the turn under way resumes on the next start."
INPUT_ENDED = (
    "switchboard> The input ended, so Switchboard stops once the agent's work is done. To serve"
    " without a terminal chat, set enabled = false under [workspaces.console] in the config."
)


class Ending(Enum):
    """How the operator left the chat."""

    SETTLE = "settle"  # nothing under way (or the input's end): the agent finishes first
    NOW = "now"  # the agent is working: stop now, as SIGTERM does; it resumes on the next start


class ConsoleAdapter:
    def __init__(
        self,
        bridge: Bridge,
        workspace: WorkspaceConfig,
        stdin: TextIO,
        transport: ConsoleTransport,
        *,
        working: Callable[[], bool],
        data_dir: Path | None = None,
    ) -> None:
        """`working`: whether the agent has work under way (in any conversation), which
        quitting from the terminal does not wait for."""
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
        self._working = working
        self._stop_asked: str | None = None  # the run Ctrl-C asked to stop
        self._warned_at: float | None = None  # when Ctrl-C on an empty line said how to quit

    async def run(self) -> Ending:
        """Read messages until the operator leaves: Ctrl-D, Ctrl-C twice (see `keys`), or the
        end of piped input. Leaving a terminal while the agent works stops the process at
        once, as SIGTERM does (the work resumes on the next start): the operator is told so."""
        screen = self._transport.screen
        if not is_terminal(self._stdin, screen.out):
            await read_lines(self._stdin, self._receive)
            screen.print(INPUT_ENDED)
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
            await self._typed.join()  # what was typed is stored before leaving
        finally:
            sending.cancel()
        if not self._working():
            return Ending.SETTLE
        screen.print(QUITTING)
        return Ending.NOW

    def _interrupted(self, line: str) -> Verdict:
        """Ctrl-C, with the line being typed: a turn running here is stopped (the message
        /stop is sent), a half-typed line cleared, and an empty line warned about first."""
        now = time.monotonic()
        running = self._transport.running(self._route)
        verdict = on_ctrl_c(AtCtrlC(running, self._stop_asked, line, self._warned_at, now))
        self._warned_at = now if verdict is Verdict.WARN else None
        if verdict is Verdict.STOP_TURN:
            self._stop_asked = running
            self._typed.put_nowait("/stop")
        elif verdict is Verdict.WARN:
            self._transport.screen.print(HOW_TO_QUIT)
        return verdict

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
