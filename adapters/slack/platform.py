"""Slack as the bridge sees it: its mrkdwn markup, its limits and the shape of its ids."""

from __future__ import annotations

from dataclasses import dataclass, field

from adapters.slack import markup
from adapters.slack.settings import SLACK_SECTION
from bridge.transport import Call, Pacing, Rule, Scope
from bridge.types import TransportLimits
from config.schema import OperatorConfig, WorkspaceConfig

NAME = "slack"


def _per_minute(call: Call, count: int) -> Rule:
    return Rule(frozenset({call}), Scope.ACCOUNT, count, 60.0)


# Slack's limits are per method and workspace: chat.postMessage about one a second per
# channel (short bursts allowed); chat.update, chat.delete and reactions.add are tier 3
# (50+ a minute), reactions.remove tier 2 (20+); assistant.threads.setStatus is taken as
# tier 3, as is conversations.replies (a thread read for context). The streaming methods
# (chat.startStream, chat.appendStream, chat.stopStream) are counted together, as
# conservatively as one tier-3 method. A margin under each.
PACING = Pacing(
    max_chars=3900,
    max_chars_with_buttons=3000,  # a section block's text, beside the notification's buttons
    per_conversation_interval_s=1.1,
    global_per_second=20,
    rules=(
        Rule(frozenset({Call.POST}), Scope.CHANNEL, 1, 1.1),
        Rule(frozenset({Call.POST}), Scope.ACCOUNT, 1, 1 / 20, limit=False),  # a spread
        _per_minute(Call.EDIT, 45),
        _per_minute(Call.DELETE, 45),
        _per_minute(Call.INDICATOR, 45),
        _per_minute(Call.REACTION, 18),
        _per_minute(Call.READ, 45),  # conversations.replies, tier 3
        _per_minute(Call.STREAM, 45),
    ),
)


@dataclass(frozen=True, slots=True)
class SlackProfile:
    name: str = NAME
    limits: TransportLimits = field(default=PACING)

    def render(self, text: str) -> str:
        """Markdown as Slack's mrkdwn (`adapters/slack/markup.py`)."""
        return markup.render(text)

    def serves(self, workspace: WorkspaceConfig) -> bool:
        return SLACK_SECTION.of(workspace) is not None

    def operator_id(self, workspace: WorkspaceConfig, operator: OperatorConfig) -> str | None:
        return SLACK_SECTION.user(operator)

    def allows(self, workspace: WorkspaceConfig, conversation_id: str) -> bool:
        slack = SLACK_SECTION.of(workspace)
        return slack is not None and conversation_id in slack.channels

    def direct_conversation(
        self, workspace: WorkspaceConfig, operator: OperatorConfig
    ) -> str | None:
        """Posting to a user id opens the bot's DM with them."""
        return SLACK_SECTION.user(operator)

    def paired_operator(self, operator_id: str, user_id: str) -> OperatorConfig:
        return OperatorConfig.model_validate({"id": operator_id, "slack_user_id": user_id})

    def listens(self, workspace: WorkspaceConfig) -> str | None:
        slack = SLACK_SECTION.of(workspace)
        if slack is None:
            return None
        return "socket mode" if slack.app_token is not None else "http"


SLACK = SlackProfile()
