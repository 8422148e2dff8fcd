"""`POST /slack/events`: the one HTTP door for every Slack workspace. The request goes to the
workspace whose signing secret signed it and whose team it names, and that workspace's bolt
app answers it; a request no configured secret signed is refused with 401, one that is no
Slack request with 400 (`adapters/doors/slack.py` checks both). A failure after that (the
store is down) stays a 5xx, so that Slack retries.

With the door process (`adapters/doors/`), the same checks run there and the request reaches
this front later, through `replay`."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.request.async_request import AsyncBoltRequest

from adapters.doors.slack import SlackKey, check
from adapters.slack.adapter import SlackAdapter
from bridge.forwarding import Forwarding, NotReady
from bridge.store import Forwarded

log = logging.getLogger(__name__)


class SlackFront:
    def __init__(self, adapters: Iterable[SlackAdapter]) -> None:
        self._adapters: dict[str, SlackAdapter] = {}
        self._keys: list[SlackKey] = []
        self.update(adapters)
        # Set while this replica is a standby: checked requests are stored for the active one.
        self.forwarding: Forwarding | None = None

    def update(self, adapters: Iterable[SlackAdapter]) -> None:
        """The workspaces' adapters after a reload."""
        signed = [a for a in adapters if a.verifier is not None]
        self._adapters = {a.workspace.id: a for a in signed}
        self._keys = [slack_key(a) for a in signed]

    async def handle(self, request: web.Request) -> web.Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        checked = check(self._keys, await request.read(), headers)
        if isinstance(checked, web.Response):
            return checked
        adapter = self._adapters[checked.workspace_id]
        if checked.team is not None and self.forwarding is not None:
            await self.forwarding.forward(
                "slack",
                checked.workspace_id,
                checked.platform_id,
                checked.text,
                headers,
                request.query_string,
            )  # a store that fails raises: a 500, and Slack sends it again
            return web.Response(status=200)
        if checked.team is not None and adapter.identity is None:  # restarting, or not started
            log.info("slack request while its workspace's bot is not running; answered 503")
            return web.json_response({"error": "not running, send it again later"}, status=503)
        bolt_headers: dict[str, str | Sequence[str]] = dict(headers)
        bolt = AsyncBoltRequest(body=checked.text, query=request.query_string, headers=bolt_headers)
        response = await adapter.app.async_dispatch(bolt)
        if response.status == 404:  # no listener takes it: acknowledged, as every front does
            return web.Response(status=200)  # (Slack resends a 404, and counts it as a failure)
        return await to_aiohttp_response(response)

    async def replay(self, request: Forwarded) -> None:
        """A request a standby replica checked and stored, handled here as if it had just
        come in. It is signed again with its workspace's own secret and a fresh timestamp:
        bolt refuses a signature older than five minutes, and a request may have waited
        longer than that for an active replica."""
        adapter = self._adapters.get(request.workspace_id)
        if adapter is None or adapter.verifier is None:
            log.warning(
                "forwarded slack request for a workspace no longer served; dropped",
                extra={"workspace": request.workspace_id},
            )
            return
        if adapter.identity is None:
            raise NotReady(f"workspace {request.workspace_id}'s Slack app is not running")
        timestamp = str(int(time.time()))
        headers: dict[str, str | Sequence[str]] = {
            **request.headers,
            "x-slack-request-timestamp": timestamp,
            "x-slack-signature": adapter.verifier.generate_signature(
                timestamp=timestamp, body=request.body
            )
            or "",
        }
        bolt_request = AsyncBoltRequest(body=request.body, query=request.query, headers=headers)
        response = await adapter.app.async_dispatch(bolt_request)
        if response.status >= 500:
            raise RuntimeError(f"slack request not handled ({response.status})")


def slack_key(adapter: SlackAdapter) -> SlackKey:
    assert adapter.verifier is not None
    return SlackKey(adapter.workspace.id, adapter.settings.team_id, adapter.verifier)
