"""Buttons under a message (migration 14): kept as JSON with the delivery that carries them.
A press names the delivery whose rendering of the message it was pressed on, and the
button's place there, so it runs the command the operator saw on that button, even when the
message has been rewritten in place with other buttons since (or is being rewritten: the
delivery is written before its send, so its buttons are found before its post is recorded).

A button posted before presses named their delivery (`InboundChat.button_of` None) is found
through the delivery recorded as posted on its message now."""

from __future__ import annotations

import json
from collections.abc import Sequence

from bridge.types import Button, InboundChat, Route
from runtime.store.store import Store

# A press naming its delivery: that delivery's buttons, and where it was sent (to check it
# is the press's conversation). Served by deliveries' unique id.
BUTTONS_OF = "SELECT route, buttons FROM deliveries WHERE id = ? AND buttons IS NOT NULL"

# A press naming only its message: the buttons of the delivery posted as that message, in
# this workspace only (a message of another workspace is not found). Served by
# delivery_posts' message index and deliveries' unique id (tests/runtime/test_query_plans.py).
BUTTONS_AT = (
    "SELECT d.buttons FROM delivery_posts dp JOIN deliveries d ON d.id = dp.delivery_id"
    " WHERE dp.workspace_key = ? AND dp.message_id = ? AND d.buttons IS NOT NULL LIMIT 1"
)


def encode(buttons: Sequence[Button]) -> str | None:
    """As the `buttons` column keeps them; None: a message without buttons."""
    if not buttons:
        return None
    return json.dumps([{"label": b.label, "command": b.command, "row": b.row} for b in buttons])


def decode(raw: str | None) -> tuple[Button, ...]:
    if not raw:
        return ()
    return tuple(Button(b["label"], b["command"], b["row"]) for b in json.loads(raw))


def sent_here(sent: Route, press: InboundChat) -> bool:
    """Whether a delivery sent to `sent` went to the conversation `press` came from: its
    workspace, and its chat (any thread of it), or in a DM the presser themself (a delivery
    to a user id goes to their DM with the bot: Slack opens it, and a Telegram private
    chat's id is its user's). A press's data can be forged: one naming another chat's
    delivery finds nothing."""
    here = press.route
    chats = {here.conversation_id, press.sender_id} if press.is_direct else {here.conversation_id}
    return (
        sent.platform == here.platform
        and sent.workspace_id == here.workspace_id
        and sent.conversation_id in chats
    )


def _command(buttons: tuple[Button, ...], place: int) -> str | None:
    return buttons[place].command if 0 <= place < len(buttons) else None


class ButtonStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def command_of(self, press: InboundChat, delivery_id: str, place: int) -> str | None:
        """The command of the `place`-th button of delivery `delivery_id`, pressed in
        `press`'s conversation; None when no such button is known there (a delivery of
        another chat or workspace, or one pruned)."""
        rows = await self._store.point_sql(BUTTONS_OF, (delivery_id,))
        if not rows or not sent_here(Route.model_validate_json(rows[0]["route"]), press):
            return None
        return _command(decode(rows[0]["buttons"]), place)

    async def command_at(self, route: Route, message_id: str, place: int) -> str | None:
        """The command of the `place`-th button under message `message_id` (as its transport
        named it) in `route`'s workspace, by the delivery recorded as posted on it now;
        None when no such button is known there (another workspace's message, or one whose
        delivery was pruned)."""
        workspace_key = f"{route.platform}:{route.workspace_id}"
        rows = await self._store.point_sql(BUTTONS_AT, (workspace_key, message_id))
        return _command(decode(rows[0]["buttons"]) if rows else (), place)
