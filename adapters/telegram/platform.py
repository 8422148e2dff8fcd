"""Telegram as the bridge sees it: its HTML markup, its limits and the shape of its ids."""

from __future__ import annotations

from dataclasses import dataclass, field

from adapters.telegram import markup
from adapters.telegram.settings import TELEGRAM_SECTION
from bridge.transport import Call, Pacing, Rule, Scope
from bridge.types import TransportLimits
from config.schema import OperatorConfig, WorkspaceConfig

NAME = "telegram"
MESSAGES = frozenset({Call.POST, Call.EDIT})  # what Telegram counts as messages in a chat
IN_GROUPS = MESSAGES | {Call.STREAM}  # in a group the answer streams as edits of a message
# About 1 message/s per chat and 20/min per group, with a margin; 30/s per bot (typing
# actions and deletes included) exactly: a call counts from its start until its answer and a
# second from then, so 30 of them can never arrive within one second, however they travel.
# The bot's messages are spread out a little faster than that (35 a second: the window, not
# the spread, sets the pace, so a late answer does not hold back every message after it), so
# a backlog does not leave in one burst. A draft
# (sendMessageDraft, private chats) is not a message: the Bot API documents no limit of its
# own, so it is taken as one a second in its chat, apart from the messages, and counted in the
# bot's 30/s.
PACING = Pacing(
    max_chars=4096,
    per_conversation_interval_s=1.1,
    global_per_second=30.0,
    rules=(
        Rule(MESSAGES, Scope.CHANNEL, 1, 1.1),
        Rule(IN_GROUPS, Scope.GROUP, 1, 1.1),
        Rule(IN_GROUPS, Scope.GROUP, 20, 62.0),
        Rule(frozenset({Call.STREAM}), Scope.CHANNEL, 1, 1.1),
        Rule(MESSAGES, Scope.ACCOUNT, 1, 1 / 35.0, limit=False),
        Rule(frozenset(Call), Scope.ACCOUNT, 30, 1.0),
        Rule(frozenset({Call.INDICATOR}), Scope.CHANNEL, 1, 3.0, limit=False),  # lasts 5 s
        # A chat's second is shared with the replies: edit the progress message at most
        # every 3 s there, so that a reply seldom has to wait out an edit's second.
        Rule(frozenset({Call.EDIT}), Scope.CHANNEL, 1, 3.0, limit=False),
    ),
    group_prefix="-",  # groups, supergroups and channels have negative ids
)


@dataclass(frozen=True, slots=True)
class TelegramProfile:
    name: str = NAME
    limits: TransportLimits = field(default=PACING)

    def render(self, text: str) -> str:
        """Markdown as Telegram's HTML parse mode shows it (`adapters/telegram/markup.py`)."""
        return markup.render(text)

    def serves(self, workspace: WorkspaceConfig) -> bool:
        return TELEGRAM_SECTION.of(workspace) is not None

    def operator_id(self, workspace: WorkspaceConfig, operator: OperatorConfig) -> str | None:
        return TELEGRAM_SECTION.user(operator)

    def allows(self, workspace: WorkspaceConfig, conversation_id: str) -> bool:
        telegram = TELEGRAM_SECTION.of(workspace)
        return conversation_id in {str(c) for c in (telegram.chats if telegram else [])}

    def direct_conversation(
        self, workspace: WorkspaceConfig, operator: OperatorConfig
    ) -> str | None:
        """A private chat's id is the user's id."""
        return self.operator_id(workspace, operator)

    def paired_operator(self, operator_id: str, user_id: str) -> OperatorConfig:
        """Telegram's user ids are numbers: any other id matches no one."""
        user = int(user_id) if user_id.isdigit() else None
        return OperatorConfig.model_validate({"id": operator_id, "telegram_user_id": user})

    def listens(self, workspace: WorkspaceConfig) -> str | None:
        telegram = TELEGRAM_SECTION.of(workspace)
        return telegram.mode if telegram is not None else None


TELEGRAM = TelegramProfile()
