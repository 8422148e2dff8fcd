"""Who is trusted where (DESIGN §3, Ingress step 2): computed from the config only."""

from __future__ import annotations

from dataclasses import dataclass

from bridge.types import InboundChat, Platform
from config.schema import OperatorConfig, SwitchboardConfig, WorkspaceConfig


@dataclass(frozen=True, slots=True)
class Trusted:
    workspace: WorkspaceConfig
    operator: OperatorConfig


@dataclass(frozen=True, slots=True)
class Refused:
    reason: str
    workspace: WorkspaceConfig | None = None
    operator_elsewhere: bool = False  # an operator, in a conversation the admin did not allow


def classify(config: SwitchboardConfig, chat: InboundChat) -> Trusted | Refused:
    workspace = next((w for w in config.workspaces if w.id == chat.route.workspace_id), None)
    if workspace is None:
        return Refused(f"unknown workspace {chat.route.workspace_id!r}")
    operator = _operator(workspace, chat)
    if operator is None:
        return Refused(f"sender {chat.sender_id!r} is not an operator", workspace)
    if not (chat.is_direct or _conversation_allowed(workspace, chat)):
        return Refused(
            f"conversation {chat.route.conversation_id!r} is not allowed",
            workspace,
            operator_elsewhere=True,
        )
    return Trusted(workspace, operator)


def _operator(workspace: WorkspaceConfig, chat: InboundChat) -> OperatorConfig | None:
    platform = chat.route.platform
    for operator in workspace.operators:
        if platform is Platform.SLACK and operator.slack_user_id == chat.sender_id:
            return operator
        if platform is Platform.TELEGRAM and str(operator.telegram_user_id) == chat.sender_id:
            return operator
        if (
            platform is Platform.CONSOLE
            and workspace.console
            and workspace.console.operator == operator.id == chat.sender_id
        ):
            return operator
    return None


def _conversation_allowed(workspace: WorkspaceConfig, chat: InboundChat) -> bool:
    """A channel or group the admin listed (DMs are checked by the caller)."""
    conversation = chat.route.conversation_id
    slack, telegram = workspace.slack, workspace.telegram
    match chat.route.platform:
        case Platform.SLACK:
            return slack is not None and conversation in slack.channels
        case Platform.TELEGRAM:
            return telegram is not None and conversation in {str(c) for c in telegram.chats}
        case Platform.CONSOLE:
            return workspace.console is not None
    return False
