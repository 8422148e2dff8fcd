"""Commands whose answer goes back only to the person who asked (Slack's slash command):
trusted as a chat message would be, run like one, the answer returned to the adapter instead
of posted in the conversation."""

from __future__ import annotations

import logging

from bridge import texts
from bridge.commands import Command, CommandName, Commands, UnknownCommand, parse
from bridge.metrics import Metrics
from bridge.platform import PlatformProfile
from bridge.store import BridgeStore
from bridge.trust import Refused, classify
from bridge.types import Answer, InboundChat
from bridge.verdicts import refused
from config.current import CurrentConfig
from runtime import Trust

log = logging.getLogger(__name__)


class EphemeralCommands:
    def __init__(
        self, config: CurrentConfig, store: BridgeStore, commands: Commands, metrics: Metrics
    ) -> None:
        self._config = config
        self._store = store
        self._commands = commands
        self._metrics = metrics

    async def answer(
        self, chat: InboundChat, profile: PlatformProfile | None, *, invoked_as: str
    ) -> str:
        """The answer to `chat`, a command sent as `invoked_as <text>` (e.g. `/switchboard
        status`). A stranger, or an operator in a conversation the admin did not allow, is
        told so (only they see it) and the refusal is audited."""
        route = chat.route
        verdict = classify(self._config(), chat, profile)
        if isinstance(verdict, Refused):
            self._metrics.messages_in.inc(
                workspace=route.workspace_id, trust=Trust.UNTRUSTED_EXTERNAL
            )
            async with self._store.write() as tx:
                tx.emit(refused(chat, verdict.reason, replied=True))
            log.info(
                "command refused", extra={"platform": route.platform, "reason": verdict.reason}
            )
            return texts.NOT_ALLOWED_HERE if verdict.operator_elsewhere else texts.NOT_AN_OPERATOR
        self._metrics.messages_in.inc(workspace=verdict.workspace.id, trust=Trust.TRUSTED_OPERATOR)
        command = parse(chat.text or "") or UnknownCommand(chat.text or "")
        if isinstance(command, Command) and command.name is CommandName.HELP:
            lines = "\n".join(
                f"{invoked_as} {name}{args} - {what}"
                for name, (args, what) in texts.COMMANDS.items()
            )
            return texts.SLASH_HELP.format(command=invoked_as, lines=lines)
        if isinstance(command, UnknownCommand):
            return texts.UNKNOWN_COMMAND.format(
                command=f"{invoked_as} {command.text.lstrip('/')}",
                help_hint=texts.SLASH_HINT.format(command=invoked_as),
            )
        answer = await self._commands.run(
            command,
            route,
            verdict.workspace,
            operator_id=verdict.operator.id,
            direct=chat.is_direct,
        )
        # Only its sender sees it, and no delivery keeps it: its text, without buttons (it
        # names the commands they would run).
        return answer.text if isinstance(answer, Answer) else answer
