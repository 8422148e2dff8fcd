"""A chat in the terminal: lines typed are operator messages; replies, notifications and
progress are printed. The operator can type while the agent works."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TextIO

from bridge import (
    Bridge,
    DeliveryKind,
    InboundChat,
    PlatformProfile,
    ProgressView,
    Route,
    TransportLimits,
    texts,
)
from bridge.transport import Budget
from config.schema import OperatorConfig, WorkspaceConfig

NAME = "console"
CONVERSATION = "console"  # the one conversation: this terminal

PREFIX = {
    DeliveryKind.TURN_RESULT: "agent> ",
    DeliveryKind.NOTIFICATION: "notice> ",
    DeliveryKind.APPROVAL: "approve?> ",
    DeliveryKind.COMMAND_REPLY: "switchboard> ",
    DeliveryKind.PROGRESS: "... ",
}


@dataclass(frozen=True, slots=True)
class ConsoleProfile:
    """The terminal: plain text, no limits to speak of, its one operator from the config."""

    name: str = NAME
    limits: TransportLimits = field(default=TransportLimits(max_chars=100_000))

    def render(self, text: str) -> str:
        return text

    def serves(self, workspace: WorkspaceConfig) -> bool:
        return workspace.console is not None

    def operator_id(self, workspace: WorkspaceConfig, operator: OperatorConfig) -> str | None:
        console = workspace.console
        return operator.id if console is not None and console.operator == operator.id else None

    def allows(self, workspace: WorkspaceConfig, conversation_id: str) -> bool:
        return workspace.console is not None

    def direct_conversation(
        self, workspace: WorkspaceConfig, operator: OperatorConfig
    ) -> str | None:
        return CONVERSATION if workspace.console is not None else None


CONSOLE = ConsoleProfile()


class ConsoleTransport:
    profile: PlatformProfile = CONSOLE

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._last_step: dict[str, str] = {}

    def _print(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    async def send(
        self, route: Route, text: str, *, kind: DeliveryKind, intent_id: str, chunk: int
    ) -> str | None:
        prefix = PREFIX[kind]
        if kind is DeliveryKind.APPROVAL:
            text += texts.APPROVAL_HINT  # a terminal has no buttons: the commands answer
        indent = " " * len(prefix)
        self._print(prefix + text.replace("\n", "\n" + indent))
        return None  # a printed line cannot be replied to

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        return None

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        if view is None:
            self._last_step.pop(route.conversation_key, None)
            return
        if view.note:
            self._print(f"    {view.note}")
        elif self._last_step.get(route.conversation_key) != view.step:
            self._last_step[route.conversation_key] = view.step
            self._print(f"    ... {view.step} ({view.elapsed_s:.1f}s)")


class ConsoleAdapter:
    def __init__(self, bridge: Bridge, workspace: WorkspaceConfig, stdin: TextIO) -> None:
        assert workspace.console is not None
        self._bridge = bridge
        self._operator = workspace.console.operator
        self._route = Route(platform=NAME, workspace_id=workspace.id, conversation_id=CONVERSATION)
        self._stdin = stdin
        self._boot = uuid.uuid4().hex[:12]  # dedupe keys are unique per process run

    async def run(self) -> None:
        """Read lines until end of input (Ctrl-D)."""
        reader = await _line_reader(self._stdin)
        number = 0
        while True:
            line = await reader()
            if line is None:
                return
            number += 1
            await self._bridge.receive(
                InboundChat(
                    route=self._route,
                    sender_id=self._operator,
                    is_direct=True,
                    dedupe_keys=(f"{self._boot}:{number}",),
                    text=line.rstrip("\n"),
                    message_ref=f"line {number}",
                )
            )


LineSource = Callable[[], Awaitable[str | None]]


async def _line_reader(stream: TextIO) -> LineSource:
    loop = asyncio.get_running_loop()
    try:
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    except (ValueError, OSError):  # a regular file: read it in a thread

        async def from_thread() -> str | None:
            line = await asyncio.to_thread(stream.readline)
            return line or None

        return from_thread

    async def from_pipe() -> str | None:
        line = await reader.readline()
        return line.decode(errors="replace") if line else None

    return from_pipe
