"""Telegram's side of the replay (`adapters/intake/replay.py`): an update a door stored (a
webhook's, or one polled) is read with python-telegram-bot and handed to its workspace's bot,
whose handlers turn it into the bridge's inbound messages (`adapter.py`, `inbound.py`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from adapters.intake.record import NotReady
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.platform import TELEGRAM
from adapters.telegram.updates import parse_update
from bridge.store import StoredRequest

log = logging.getLogger(__name__)


class TelegramDecoder:
    platform = TELEGRAM.name

    def __init__(self) -> None:
        self._bots: dict[str, TelegramAdapter] = {}

    def update(self, adapters: Iterable[TelegramAdapter]) -> None:
        """The workspaces' adapters after a start or a reload."""
        self._bots = {a.workspace.id: a for a in adapters}

    async def decode(self, request: StoredRequest) -> None:
        adapter = self._bots.get(request.workspace_id)
        if adapter is None:
            log.warning(
                "stored telegram update for a bot no longer served; dropped",
                extra={"workspace": request.workspace_id},
            )
            return
        if not adapter.application.running:
            raise NotReady(f"workspace {request.workspace_id}'s bot is not running")
        update = parse_update(json.loads(request.body), adapter.application.bot)
        if isinstance(update, str):  # the door checks the shape, not all PTB reads
            fields = {"workspace": request.workspace_id, "reason": update}
            log.warning("telegram update refused", extra=fields)
            return
        await adapter.feed(update)
