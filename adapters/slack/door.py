"""Slack's door, `POST /slack/events`: a request signed by a configured workspace's secret, for
that workspace's team, shaped as Slack sends it (`verify.py`), is stored and answered 200; one
no configured secret signed is refused with 401, one that is no Slack request with 400. Slack's
own checks of the endpoint (the URL check, the SSL check) are answered here, never stored."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from aiohttp import web
from slack_sdk.signature import SignatureVerifier

from adapters.intake.door import DoorKind, Failed, Poll, Store
from adapters.intake.record import Arrival, Put
from adapters.slack.verify import SlackKey, check

if TYPE_CHECKING:
    from config.schema import SwitchboardConfig

PLATFORM = "slack"  # `SLACK.name`, without loading the profile's markup here
VERIFIED = "slack signature"


def keys(config: SwitchboardConfig) -> Any:
    """Each workspace's team and signing secret (one in Socket Mode alone has none)."""
    # The config's models: the main process's, which alone calls this (not the door process).
    from adapters.slack.settings import SLACK_SECTION

    found = [
        {"workspace": w.id, "team": slack.team_id, "secret": secret.get_secret_value()}
        for w in config.workspaces
        if (slack := SLACK_SECTION.of(w)) is not None
        and (secret := slack.signing_secret) is not None
    ]
    return found or None


class SlackDoor:
    def __init__(self, put: Put, failed: Failed) -> None:
        self._keys: list[SlackKey] = []

    def update(self, keys: Any) -> None:
        self._keys = [
            SlackKey(k["workspace"], k["team"], SignatureVerifier(k["secret"])) for k in keys or ()
        ]

    def route(self, app: web.Application, store: Store) -> None:
        app.router.add_post("/slack/events", partial(self._events, store))

    def pollers(self) -> Mapping[tuple[str, Hashable], Poll]:
        return {}

    async def _events(self, store: Store, request: web.Request) -> web.Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        checked = check(self._keys, await request.read(), headers)
        if isinstance(checked, web.Response):
            return checked
        if checked.team is None:
            return checked.answer_check()
        await store(
            Arrival(
                PLATFORM,
                checked.workspace_id,
                checked.place,
                checked.platform_id,
                checked.text,
                VERIFIED,
                headers={"content-type": headers.get("content-type", "")},
                query=request.query_string,
            )
        )
        return web.Response(status=200)


SLACK_DOOR = DoorKind(PLATFORM, keys, SlackDoor)
