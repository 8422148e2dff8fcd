"""The terminal as a platform: its name, its one conversation, its limits and operator."""

from __future__ import annotations

from dataclasses import dataclass, field

from adapters.console.markup import render
from bridge.types import TransportLimits
from config.schema import OperatorConfig, WorkspaceConfig

NAME = "console"
CONVERSATION = "console"  # the one conversation: this terminal


@dataclass(frozen=True, slots=True)
class ConsoleProfile:
    """The terminal: markdown shown as plain text, no buttons, no limits to speak of, its one
    operator from the config."""

    name: str = NAME
    limits: TransportLimits = field(default=TransportLimits(max_chars=100_000, buttons=False))

    def render(self, text: str) -> str:
        """Markdown as plain text: the terminal shows no markup (`adapters/console/markup`)."""
        return render(text)

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

    def paired_operator(self, operator_id: str, user_id: str) -> OperatorConfig:
        """The terminal's one operator is the config's: no one pairs here."""
        return OperatorConfig(id=operator_id)

    def listens(self, workspace: WorkspaceConfig) -> str | None:
        return "stdin"


CONSOLE = ConsoleProfile()
