"""Who is trusted where (DESIGN §3, Ingress step 2): computed from the config (and the
senders paired with a workspace, which the caller passes), with the platform's facts from
its adapter's profile."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bridge.platform import PlatformProfile
from bridge.types import InboundChat
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


def classify(
    config: SwitchboardConfig,
    chat: InboundChat,
    profile: PlatformProfile | None,
    *,
    also: Sequence[OperatorConfig] = (),
) -> Trusted | Refused:
    """`profile`: the platform the message came from (None: no adapter runs for it);
    `also`: operators of the message's workspace besides the file's (paired senders)."""
    workspace = next((w for w in config.workspaces if w.id == chat.route.workspace_id), None)
    if workspace is None:
        return Refused(f"unknown workspace {chat.route.workspace_id!r}")
    if profile is None or not profile.serves(workspace):
        return Refused(f"workspace {workspace.id!r} does not use {chat.route.platform}")
    operator = next(
        (
            o
            for o in (*workspace.operators, *also)
            if profile.operator_id(workspace, o) == chat.sender_id
        ),
        None,
    )
    if operator is None:
        return Refused(f"sender {chat.sender_id!r} is not an operator", workspace)
    if not (chat.is_direct or profile.allows(workspace, chat.route.conversation_id)):
        return Refused(
            f"conversation {chat.route.conversation_id!r} is not allowed",
            workspace,
            operator_elsewhere=True,
        )
    return Trusted(workspace, operator)


def stranger(sender: Trusted | Refused) -> bool:
    """Refused as someone who is not an operator of a workspace (not: in a chat not allowed)."""
    return (
        isinstance(sender, Refused)
        and sender.workspace is not None
        and not sender.operator_elsewhere
    )


def sender_key(chat: InboundChat) -> str:
    route = chat.route
    return f"{route.platform}:{route.workspace_id}:{chat.sender_id}"
