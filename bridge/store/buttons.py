"""Buttons under a message (migration 14): kept as JSON with the delivery that carries them,
and read back through the message the platform posted, so a press (which names only the
message and the button's place) runs the command that button stands for."""

from __future__ import annotations

import json
from collections.abc import Sequence

from bridge.types import OPEN_DELIVERY, Button, Route
from runtime.store import Store

# A press: the buttons of the delivery posted as this message, in this workspace only (a
# message of another workspace is not found). Served by delivery_posts' message index and
# deliveries' unique id (tests/runtime/test_query_plans.py).
BUTTONS_AT = (
    "SELECT d.buttons FROM delivery_posts dp JOIN deliveries d ON d.id = dp.delivery_id"
    " WHERE dp.workspace_key = ? AND dp.message_id = ? AND d.buttons IS NOT NULL LIMIT 1"
)

# Whether a message with buttons is on its way to this conversation: posted, perhaps, but not
# yet recorded as posted (its press may come before the record does). Served by the open
# deliveries' partial index by conversation (tests/runtime/test_query_plans.py).
BUTTONS_ON_THE_WAY = (
    "SELECT 1 FROM deliveries WHERE conversation_key = ? AND status IN"
    f" ({', '.join(repr(s.value) for s in OPEN_DELIVERY)}) AND buttons IS NOT NULL LIMIT 1"
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


class ButtonStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def command_at(self, route: Route, message_id: str, place: int) -> str | None:
        """The command of the `place`-th button under message `message_id` (as its transport
        named it) in `route`'s workspace; None when no such button is known there (another
        workspace's message, or one whose delivery was pruned)."""
        workspace_key = f"{route.platform}:{route.workspace_id}"
        rows = await self._store.read_sql(BUTTONS_AT, (workspace_key, message_id))
        buttons = decode(rows[0]["buttons"]) if rows else ()
        return buttons[place].command if 0 <= place < len(buttons) else None

    async def on_the_way(self, route: Route) -> bool:
        """Whether a message with buttons to `route`'s conversation is being sent."""
        rows = await self._store.read_sql(BUTTONS_ON_THE_WAY, (route.conversation_key,))
        return bool(rows)
