"""Chat commands: parsed before anything is treated as a prompt, and run here (DESIGN §3,
step 4). Each returns the sentence to answer the operator with."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from bridge import texts
from bridge.approvals import Approving
from bridge.bindings import agent_for
from bridge.pairing import Pairing
from bridge.sessions import Sessions, agent_key
from bridge.status import Status
from bridge.types import Route
from config.schema import WorkspaceConfig
from runtime import (
    CompactStatus,
    QueueMode,
    Runtime,
    StaleRunError,
    StopStatus,
    UnknownRunError,
)

log = logging.getLogger(__name__)


class CommandName(StrEnum):
    STOP = "stop"
    STATUS = "status"
    QUEUE = "queue"
    NEW = "new"
    COMPACT = "compact"
    APPROVE = "approve"
    DENY = "deny"
    HELP = "help"


def menu() -> list[tuple[str, str]]:
    """Every command with its one-line description, for a platform's command menu."""
    return [(name.value, texts.COMMANDS[name.value][1]) for name in CommandName]


@dataclass(frozen=True, slots=True)
class Command:
    name: CommandName
    argument: str = ""


@dataclass(frozen=True, slots=True)
class UnknownCommand:
    text: str


def parse(text: str) -> Command | UnknownCommand | None:
    """A command, an unknown `/word`, or None for an ordinary message.

    `/stop@MyBot` (Telegram's form in groups) is the same command as `/stop`.
    """
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    name = head.split("@", 1)[0].lower()
    if not name or "/" in name:
        return None  # a path like /usr/bin is a message, not a command
    try:
        return Command(CommandName(name), rest.strip())
    except ValueError:
        return UnknownCommand(f"/{name}")


def answers_approval(command: Command | UnknownCommand) -> bool:
    return isinstance(command, Command) and command.name in (CommandName.APPROVE, CommandName.DENY)


class Commands:
    """Runs an operator's command in the conversation it was sent from."""

    def __init__(
        self, runtime: Runtime, sessions: Sessions, status: Status, pairing: Pairing | None = None
    ) -> None:
        self._runtime = runtime
        self._sessions = sessions
        self._status = status
        self._approving = Approving(runtime, sessions, pairing)

    async def run(
        self,
        command: Command | UnknownCommand,
        route: Route,
        workspace: WorkspaceConfig,
        *,
        operator_id: str,
        direct: bool = False,
        decision: tuple[str, str] | None = None,
    ) -> str:
        """`direct`: the conversation is a DM (a binding may name DMs); `decision`: what the
        message answers yes or no to (a button on it, a reply to it): ("approval", id) or
        ("pairing", code)."""
        if isinstance(command, UnknownCommand):
            return texts.UNKNOWN_COMMAND.format(command=command.text, help_hint=texts.HELP_HINT)
        match command.name:
            case CommandName.HELP:
                return texts.HELP
            case CommandName.NEW:
                await self._sessions.session_for(route, workspace, fresh=True, direct=direct)
                return texts.NEW_SESSION
            case CommandName.STATUS:
                bound = agent_key(workspace.id, agent_for(workspace, route.home, direct=direct))
                return await self._status.text(
                    self._sessions.session_of(route), workspace, bound_agent=bound
                )
            case CommandName.QUEUE:
                return await self._queue(route, workspace, command.argument, direct)
            case CommandName.STOP:
                return await self._stop(route, operator_id)
            case CommandName.COMPACT:
                return self._compact(route)
            case CommandName.APPROVE | CommandName.DENY:
                return await self._approving.answer(
                    command.name is CommandName.APPROVE,
                    argument=command.argument,
                    pointed=decision,
                    route=route,
                    workspace=workspace,
                    operator_id=operator_id,
                )
        raise AssertionError(f"unhandled command {command!r}")

    async def run_on(
        self, command: Command, session_id: str, workspace: WorkspaceConfig, *, operator_id: str
    ) -> str | None:
        """A command about one agent's session (a reply to its notification, or a press of
        its buttons): /stop stops that agent's turn, /status reports on it; None for the
        other commands, which act where they were sent."""
        match command.name:
            case CommandName.STOP:
                idle = texts.NOTIFICATION_AGENT_IDLE.format(
                    agent=self._runtime.session(session_id).agent_id
                )
                return await self._stop_session(session_id, idle, operator_id)
            case CommandName.STATUS:
                return await self._status.text(session_id, workspace)
        return None

    async def _queue(
        self, route: Route, workspace: WorkspaceConfig, argument: str, direct: bool
    ) -> str:
        session_id = await self._sessions.session_for(route, workspace, direct=direct)
        current = self._runtime.status(session_id).mode
        try:
            mode = QueueMode(argument.lower())
        except ValueError:
            return texts.QUEUE_USAGE.format(mode=current)
        await self._runtime.set_queue_mode(session_id, mode)
        return texts.QUEUE_SET.format(mode=mode)

    def _compact(self, route: Route) -> str:
        session_id = self._sessions.session_of(route)
        if session_id is None:
            return texts.NOTHING_TO_COMPACT
        status = self._runtime.compact(session_id)
        return texts.COMPACTING if status is CompactStatus.STARTED else texts.COMPACT_NEXT_STEP

    async def _stop(self, route: Route, operator_id: str) -> str:
        session_id = self._sessions.session_of(route)
        if session_id is None:
            return texts.NOTHING_TO_STOP
        return await self._stop_session(session_id, texts.NOTHING_TO_STOP, operator_id)

    async def _stop_session(self, session_id: str, idle: str, operator_id: str) -> str:
        run_id = self._runtime.status(session_id).run_id
        if run_id is None:
            return idle
        try:
            result = await self._runtime.stop(session_id, run_id)
        except (StaleRunError, UnknownRunError):
            return idle
        if result.status is not StopStatus.STOPPED:
            return texts.ALREADY_STOPPED
        log.info(
            "turn stopped", extra={"session_id": session_id, "run_id": run_id, "by": operator_id}
        )
        return texts.STOPPED
