"""The hooks' side of the replay: a stored event, checked at its door (`door.py`), handed to
the bridge's triggers, which start the trigger's run."""

from __future__ import annotations

import hashlib

from adapters.hooks.door import TRIGGER_HEADER
from adapters.hooks.verify import SCHEMES
from bridge import Bridge
from bridge.automation.triggers import TriggerEvent
from bridge.store import StoredRequest


class HooksDecoder:
    def __init__(self, bridge: Bridge) -> None:
        self._bridge = bridge

    async def decode(self, request: StoredRequest) -> None:
        headers = request.headers
        delivery = next(
            (
                headers[s.delivery_header]
                for s in SCHEMES.values()
                if headers.get(s.delivery_header)
            ),
            hashlib.sha256(request.body.encode()).hexdigest(),
        )
        event = next(
            (headers[h] for s in SCHEMES.values() if (h := s.event_header) and headers.get(h)),
            None,
        )
        await self._bridge.triggers.receive(
            TriggerEvent(
                workspace_id=request.workspace_id,
                trigger_id=headers[TRIGGER_HEADER],
                delivery_id=delivery,
                event=event,
                body=request.body,
                received_at=request.received_at,
            )
        )
