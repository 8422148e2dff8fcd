"""Socket Mode as a way in: Slack's envelopes over a WebSocket the app token opened (the
socket's own authentication vouches for them, as a signature does for HTTP). Each is stored
through the intake, as a request to `POST /slack/events` is, and acknowledged only once
stored; one not stored is not acknowledged, so Slack sends it again."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from adapters.intake.record import Arrival, Put
from adapters.slack.platform import SLACK
from adapters.slack.verify import SlackRequest, malformed

log = logging.getLogger(__name__)

VERIFIED = "slack socket mode"
STORED_KINDS = frozenset({"events_api", "slash_commands", "interactive"})
WATCH_S = 2.0  # how often the connection is looked at: slack_sdk reconnects by itself, silently


class SocketIntake:
    def __init__(
        self,
        workspace_id: str,
        app_token: str,
        web: AsyncWebClient,
        put: Put,
        on_state: Callable[[bool], None],
    ) -> None:
        """`on_state`: told when the connection drops (False) and when it is open again."""
        self._workspace_id = workspace_id
        self._put = put
        self._on_state = on_state
        self._watch: asyncio.Task[None] | None = None
        self.client = SocketModeClient(
            app_token=app_token, web_client=web, logger=logging.getLogger("slack_sdk.socket")
        )
        self.client.socket_mode_request_listeners.append(self._on_request)

    async def connect(self) -> None:
        await self.client.connect()  # type: ignore[no-untyped-call]
        self._watch = asyncio.get_running_loop().create_task(
            self._watching(), name=f"slack-socket-watch-{self._workspace_id}"
        )

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        await self.client.close()  # type: ignore[no-untyped-call]

    async def _watching(self) -> None:
        """Say when the connection drops and when slack_sdk has it open again."""
        up = True
        while True:
            await asyncio.sleep(WATCH_S)
            now_up = bool(await self.client.is_connected())
            if now_up != up:
                up = now_up
                fields = {"workspace": self._workspace_id}
                log.warning("slack socket mode " + ("open again" if up else "lost"), extra=fields)
                self._on_state(up)

    async def _on_request(
        self, client: AsyncBaseSocketModeClient, request: SocketModeRequest
    ) -> None:
        arrival = self._arrival(request.payload) if request.type in STORED_KINDS else None
        if arrival is not None:
            try:
                await self._put(arrival)
            except Exception:  # not acknowledged: Slack sends it again
                fields = {"workspace": self._workspace_id}
                log.exception("slack socket mode request not stored", extra=fields)
                return
        ack = SocketModeResponse(request.envelope_id)
        await client.send_socket_mode_response(ack)

    def _arrival(self, payload: dict[str, Any]) -> Arrival | None:
        problem = malformed(payload)
        if problem is not None:  # never from Slack; nothing could act on it
            fields = {"workspace": self._workspace_id, "reason": problem}
            log.warning("slack socket mode request refused", extra=fields)
            return None
        checked = SlackRequest(self._workspace_id, None, json.dumps(payload), payload)
        return Arrival(
            SLACK.name,
            self._workspace_id,
            checked.place,
            checked.platform_id,
            checked.text,
            VERIFIED,
            headers={"content-type": "application/json"},
        )
