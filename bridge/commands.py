"""Chat commands: parsed before anything is treated as a prompt, and run here (DESIGN §3,
step 4). Each returns the sentence to answer the operator with."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from bridge import texts
from bridge.approvals import Approving
from bridge.automation import words
from bridge.automation.steering import Automations, NoSuchSchedule
from bridge.bindings import agent_for
from bridge.memory_chat import MemoryCommands
from bridge.pairing import Pairing
from bridge.sessions import Sessions, agent_key
from bridge.spend.chat import SpendCommands
from bridge.status import Status
from bridge.store.automation import RunOutcome
from bridge.types import Answer, Route
from config.schema import WorkspaceConfig
from runtime.engine import Runtime
from runtime.errors import StaleRunError, UnknownRunError
from runtime.messages import QueueMode
from runtime.results import CompactStatus, StopStatus

log = logging.getLogger(__name__)


class CommandName(StrEnum):
    STOP = "stop"
    STATUS = "status"
    QUEUE = "queue"
    NEW = "new"
    COMPACT = "compact"
    APPROVE = "approve"
    DENY = "deny"
    SCHEDULES = "schedules"
    USAGE = "usage"
    APPROVE_SPEND = "approve_spend"  # typed /approve-spend too
    MEMORY = "memory"
    FORGET = "forget"
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
    name = head.split("@", 1)[0].lower().replace("-", "_")
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
        self,
        runtime: Runtime,
        sessions: Sessions,
        status: Status,
        pairing: Pairing | None = None,
        automations: Automations | None = None,
    ) -> None:
        self._runtime = runtime
        self._spend = SpendCommands(runtime, sessions)
        self._memory = MemoryCommands(runtime, sessions)
        self._sessions = sessions
        self._status = status
        self._approving = Approving(runtime, sessions, pairing)
        self._automations = automations

    async def run(
        self,
        command: Command | UnknownCommand,
        route: Route,
        workspace: WorkspaceConfig,
        *,
        operator_id: str,
        direct: bool = False,
        decision: tuple[str, str] | None = None,
    ) -> str | Answer:
        """The answer, with buttons under it where it has any (`/schedules`, `/memory`).
        `direct`: the conversation is a DM (a binding may name DMs); `decision`: what the
        message answers yes or no to (a button on it, a reply to it): ("approval", id) or
        ("pairing", code)."""
        if isinstance(command, UnknownCommand):
            return texts.UNKNOWN_COMMAND.format(command=command.text, help_hint=texts.HELP_HINT)
        match command.name:
            case CommandName.HELP:
                return texts.HELP
            case CommandName.NEW:
                return await self._new(route, workspace, operator_id, direct)
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
            case CommandName.SCHEDULES:
                return await self._schedules(workspace, command.argument, operator_id)
            case CommandName.USAGE:
                return await self._spend.usage(workspace)
            case CommandName.APPROVE_SPEND:
                return self._spend.approve(route, workspace, command.argument, operator_id)
            case CommandName.MEMORY:
                return await self._memory.memory(
                    route, workspace, command.argument, operator_id=operator_id, direct=direct
                )
            case CommandName.FORGET:
                return await self._memory.forget(
                    route, workspace, command.argument, operator_id=operator_id, direct=direct
                )
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

    async def after_press(self, command: Command, workspace: WorkspaceConfig) -> Answer | None:
        """What the message a pressed button sits on shows now that its command ran, to
        show in its place; None: it stays as it is. A `/schedules` list, after its Pause,
        Resume, Run now or Cancel: the list as it is now (Resume where Pause was)."""
        automations = self._automations
        if command.name is not CommandName.SCHEDULES or automations is None:
            return None
        if not command.argument.strip():
            return None  # the list itself, answered as a new message
        now = datetime.fromtimestamp(self._runtime.clock.wall(), UTC)
        views = await automations.schedules(workspace.id)
        return words.listing(views, automations.wakeups(workspace.id), now)

    async def _schedules(
        self, workspace: WorkspaceConfig, argument: str, operator_id: str
    ) -> str | Answer:
        """/schedules lists, with buttons that steer; `pause|resume|run ID` and `cancel
        WAKE-UP` steer (a press of a button is one of these, typed out)."""
        automations = self._automations
        if automations is None:
            return words.NONE
        now = datetime.fromtimestamp(self._runtime.clock.wall(), UTC)
        action, _, name = argument.strip().partition(" ")
        name = name.strip()
        try:
            match action.lower():
                case "":
                    views = await automations.schedules(workspace.id)
                    return words.listing(views, automations.wakeups(workspace.id), now)
                case "pause" if name:
                    await automations.pause(workspace.id, name, operator_id)
                    return words.PAUSED.format(id=name)
                case "resume" if name:
                    await automations.resume(workspace.id, name, operator_id)
                    by_id = {v.id: v for v in await automations.schedules(workspace.id)}
                    return words.RESUMED.format(
                        id=name, next=words.when(by_id[name].next_fire, now)
                    )
                case "run" if name:
                    ran = await automations.run_now(workspace.id, name, operator_id)
                    said = words.RUN_NOW if ran is RunOutcome.STARTED else words.RUN_NOW_SKIPPED
                    return said.format(id=name)
                case "cancel" if name:
                    wakeup = await automations.cancel_wakeup(workspace.id, name, operator_id)
                    return words.CANCELLED.format(
                        agent=wakeup.agent, when=words.when(wakeup.due_at, now), note=wakeup.note
                    )
        except NoSuchSchedule as exc:
            return f"{str(exc).capitalize()}."
        return words.USAGE

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

    async def _new(
        self, route: Route, workspace: WorkspaceConfig, operator_id: str, direct: bool
    ) -> str:
        """A fresh session; the old one's wake-ups are cancelled first, and it sets no more
        (a turn of it still running), so none of them comes into this chat later. An agent
        that keeps memory is asked to keep what should last of the old conversation."""
        old = self._sessions.session_of(route)
        by = f"/new by {operator_id}"
        cancelled = await self._runtime.cancel_wakeups(old, by, retire=True) if old else 0
        flushing = self._runtime.leave(old) if old else False
        await self._sessions.session_for(route, workspace, fresh=True, direct=direct)
        said = [texts.NEW_SESSION]
        if flushing:
            said.append(texts.KEEPING_MEMORIES)
        if cancelled:
            said.append(texts.WAKEUPS_CANCELLED.format(wakeups=_wakeups(cancelled)))
        return " ".join(said)

    async def _stop_session(self, session_id: str, idle: str, operator_id: str) -> str:
        """Stop the running turn and cancel the session's wake-ups (before the stop, and again
        after it: what the stopped turn set on its way out), saying how many."""
        by = f"/stop by {operator_id}"
        cancelled = await self._runtime.cancel_wakeups(session_id, by)
        said = await self._stop_turn(session_id, operator_id)
        if said is not None:
            cancelled += await self._runtime.cancel_wakeups(session_id, by)
        if not cancelled:
            return said or idle
        if said is None:
            return texts.NOTHING_RUNNING_WAKEUPS.format(wakeups=_wakeups(cancelled))
        return f"{said} {texts.WAKEUPS_CANCELLED.format(wakeups=_wakeups(cancelled))}"

    async def _stop_turn(self, session_id: str, operator_id: str) -> str | None:
        """What stopping the running turn did; None when no turn runs."""
        run_id = self._runtime.status(session_id).run_id
        if run_id is None:
            return None
        try:
            result = await self._runtime.stop(session_id, run_id)
        except (StaleRunError, UnknownRunError):
            return None
        if result.status is not StopStatus.STOPPED:
            return texts.ALREADY_STOPPED
        log.info(
            "turn stopped", extra={"session_id": session_id, "run_id": run_id, "by": operator_id}
        )
        return texts.STOPPED


def _wakeups(count: int) -> str:
    return texts.WAKEUP_ONE if count == 1 else texts.WAKEUP_MANY.format(count=count)
