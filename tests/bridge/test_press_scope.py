"""Which deliveries a press may name (`bridge/store/buttons.py`, `sent_here`): one sent to the
chat it was pressed in (any thread of it), or in a DM one sent to the presser's own user id
(Slack opens the DM when the bot posts to a user id). A press's data is the client's to
forge: a delivery of another chat, workspace or platform is never found."""

from __future__ import annotations

import pytest

from bridge.store.buttons import sent_here
from bridge.types import InboundChat, Route


def press(
    conversation: str, sender: str, *, direct: bool, thread: str | None = None
) -> InboundChat:
    route = Route(
        platform="slack", workspace_id="acme", conversation_id=conversation, thread_id=thread
    )
    return InboundChat(
        route=route,
        sender_id=sender,
        dedupe_keys=("action:1",),
        text=None,
        is_direct=direct,
        pressed=True,
        replied_to=f"{conversation}:1.0",
        button=0,
        button_of="dlv_1",
    )


def sent(conversation: str, *, workspace: str = "acme", platform: str = "slack") -> Route:
    return Route(platform=platform, workspace_id=workspace, conversation_id=conversation)


@pytest.mark.parametrize(
    ("to", "pressed", "found"),
    [
        (sent("COPS"), press("COPS", "UALICE", direct=False), True),
        (sent("COPS"), press("COPS", "UALICE", direct=False, thread="1.5"), True),
        (sent("DALICE"), press("DALICE", "UALICE", direct=True), True),
        (sent("UALICE"), press("DALICE", "UALICE", direct=True), True),  # to her user id
        (sent("COTHER"), press("COPS", "UALICE", direct=False), False),
        (sent("DALICE"), press("COPS", "UALICE", direct=False), False),
        (sent("UALICE"), press("COPS", "UALICE", direct=False), False),
        (sent("UBOB"), press("DALICE", "UALICE", direct=True), False),
        (sent("COPS", workspace="globex"), press("COPS", "UALICE", direct=False), False),
        (sent("COPS", platform="telegram"), press("COPS", "UALICE", direct=False), False),
    ],
)
def test_a_press_finds_only_a_delivery_sent_where_it_was_pressed(
    to: Route, pressed: InboundChat, found: bool
) -> None:
    assert sent_here(to, pressed) is found
