"""Slack's side of the replay (`adapters/intake/replay.py`): a request a door stored (an
event, a slash command, a button press; from `POST /slack/events` or Socket Mode) goes to its
workspace's bolt app, whose listeners turn it into the bridge's inbound messages
(`adapter.py`, `inbound.py`). The door checked it (signature or Socket Mode), so bolt does not
check it again: it may have waited longer than bolt's five minutes for a signature."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from slack_bolt.request.async_request import AsyncBoltRequest

from adapters.intake.record import NotReady
from adapters.slack.adapter import SlackAdapter
from adapters.slack.platform import SLACK
from bridge.store import StoredRequest

log = logging.getLogger(__name__)


class SlackDecoder:
    platform = SLACK.name

    def __init__(self) -> None:
        self._adapters: dict[str, SlackAdapter] = {}

    def update(self, adapters: Iterable[SlackAdapter]) -> None:
        """The workspaces' adapters after a start or a reload."""
        self._adapters = {a.workspace.id: a for a in adapters}

    async def decode(self, request: StoredRequest) -> None:
        adapter = self._adapters.get(request.workspace_id)
        if adapter is None:
            log.warning(
                "stored slack request for a workspace no longer served; dropped",
                extra={"workspace": request.workspace_id},
            )
            return
        if adapter.identity is None:
            raise NotReady(f"workspace {request.workspace_id}'s Slack app is not running")
        headers: dict[str, str | Sequence[str]] = dict(request.headers)
        bolt = AsyncBoltRequest(body=request.body, query=request.query, headers=headers)
        response = await adapter.app.async_dispatch(bolt)
        if response.status >= 500:
            raise RuntimeError(f"slack request not handled ({response.status})")
