"""`POST /slack/events`: the one HTTP door for every Slack workspace. The request goes to the
workspace whose signing secret signed it and whose team it names, and that workspace's bolt
app answers it; a request no configured secret signed is refused with 401."""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request

from adapters.slack.adapter import SlackAdapter


class SlackFront:
    def __init__(self, adapters: Iterable[SlackAdapter]) -> None:
        self._adapters = [a for a in adapters if a.verifier is not None]

    async def handle(self, request: web.Request) -> web.Response:
        bolt_request = await to_bolt_request(request)
        headers = {k.lower(): v for k, v in request.headers.items()}
        signed = [a for a in self._adapters if a.signed_by_slack(bolt_request.raw_body, headers)]
        team = bolt_request.context.team_id
        if team is not None:
            signed = [a for a in signed if a.settings.team_id == team]
        if not signed:
            return web.json_response({"error": "invalid request"}, status=401)
        return await to_aiohttp_response(await signed[0].app.async_dispatch(bolt_request))
