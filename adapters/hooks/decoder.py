"""The hooks' side of the replay: a stored event, checked at its door (`door.py`), handed to
the bridge's triggers, which start the trigger's run."""

from __future__ import annotations

from adapters.hooks.door import TRIGGER_HEADER
from adapters.hooks.schemes import shown_values
from adapters.hooks.verify import digest, timestamp_of
from bridge.automation.triggers import TriggerEvent
from bridge.service import Bridge
from bridge.store.records import StoredRequest


class HooksDecoder:
    def __init__(self, bridge: Bridge) -> None:
        self._bridge = bridge

    async def decode(self, request: StoredRequest) -> None:
        headers = request.headers
        event, delivery = shown_values(headers)  # only in their shapes
        await self._bridge.triggers.receive(
            TriggerEvent(
                workspace_id=request.workspace_id,
                trigger_id=headers[TRIGGER_HEADER],
                digest=digest(request.body.encode(), timestamp_of(headers)),
                delivery_id=delivery,
                event=event,
                body=request.body,
                received_at=request.received_at,
            )
        )
