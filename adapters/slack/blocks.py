"""The Block Kit of the bot's messages: the progress message with its Stop button, and a
message with the buttons of its kind (a notification's, an approval request's) or its own (a
command's answer), within Slack's limits on blocks and buttons."""

from __future__ import annotations

from typing import Any

from adapters.slack.inbound import APPROVAL_ACTIONS, NOTIFICATION_ACTIONS, STOP_ACTION, action_of
from bridge.transport import Post
from bridge.types import DeliveryKind, button_rows

SECTION_TEXT = 3000  # a section block's text, at most
BUTTON_TEXT = 75  # a button's label, at most
MAX_BLOCKS = 50  # in one message
MAX_ELEMENTS = 25  # in one actions block

# The buttons a message carries on its first part: (action_id, label, style) each.
KIND_BUTTONS: dict[DeliveryKind, list[tuple[str, str, str | None]]] = {
    DeliveryKind.NOTIFICATION: [
        (action, label, None)
        for action, label in zip(NOTIFICATION_ACTIONS, ("Stop", "Status"), strict=True)
    ],
    DeliveryKind.APPROVAL: [
        (action, label, style)
        for action, label, style in zip(
            APPROVAL_ACTIONS, ("Approve", "Deny"), ("primary", "danger"), strict=True
        )
    ],
}


def _button(action: str, label: str, value: str, style: str | None = None) -> dict[str, Any]:
    if len(label) > BUTTON_TEXT:
        label = label[: BUTTON_TEXT - 1] + "\u2026"
    button: dict[str, Any] = {
        "type": "button",
        "action_id": action,
        "text": {"type": "plain_text", "text": label},
        "value": value,
    }
    if style:
        button["style"] = style
    return button


def progress_blocks(text: str, *, stop: bool = True) -> list[dict[str, Any]]:
    section = {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_TEXT]}}
    if not stop:
        return [section]
    stop_button = _button(STOP_ACTION, "Stop", "stop", "danger")
    return [section, {"type": "actions", "elements": [stop_button]}]


def message_blocks(post: Post) -> list[dict[str, Any]] | None:
    """The post's text as one section, then its buttons: its kind's on the first part, then
    its own row by row (an actions block each), each one's action id its place and its value
    the post's delivery (a press names both, and the bridge finds the command this
    rendering showed). None: no buttons, plain text. The bridge splits such a message at the
    section block's 3,000 characters (`max_chars_with_buttons`)."""
    rows = []
    if post.chunk == 0 and post.kind in KIND_BUTTONS:
        rows.append([_button(a, label, a, style) for a, label, style in KIND_BUTTONS[post.kind]])
    for row in button_rows(post.buttons):
        rows.append([_button(action_of(place), b.label, post.intent_id) for place, b in row])
    if not rows:
        return None
    section = {"type": "section", "text": {"type": "mrkdwn", "text": post.text}}
    actions = [{"type": "actions", "elements": row[:MAX_ELEMENTS]} for row in rows]
    return [section, *actions[: MAX_BLOCKS - 1]]
