"""Telegram long polling, in the door process or (without one) in the main process. Telegram
counts an update as delivered once a later getUpdates asks for an offset past it, so each batch
is stored in the intake (one shared commit) before the next call: an update Telegram handed
over is never lost, even if Switchboard dies right after, and a long batch never holds up the
turns (they take the stored updates at their own pace, as they take webhook updates)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import aiohttp

from adapters.intake.record import Arrival, Put
from adapters.telegram import shape

log = logging.getLogger(__name__)

POLL_TIMEOUT_S = 10  # how long Telegram holds a getUpdates call open when there is nothing
MAX_BACKOFF_S = 30.0
POLLED = "telegram getUpdates"  # what vouches for a polled update: the bot's own call


@dataclass(frozen=True, slots=True)
class PollingKey:
    workspace_id: str
    token: str
    api_base_url: str  # as python-telegram-bot takes it: https://api.telegram.org/bot


class PollFailed(Exception):
    pass


class Poller:
    """One bot's getUpdates loop; `failed` hears each failure (workspace id, what went wrong)."""

    def __init__(self, key: PollingKey, put: Put, failed: Callable[[str, str], None]) -> None:
        self.key = key
        self._put = put
        self._failed = failed
        self._url = f"{key.api_base_url}{key.token}/"
        self._offset: int | None = None

    async def run(self) -> None:
        timeout = aiohttp.ClientTimeout(total=POLL_TIMEOUT_S + 15)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            delay = 0.0
            webhook_deleted = False
            while True:
                try:
                    if not webhook_deleted:  # getUpdates is refused while a webhook is set
                        await self._call(http, "deleteWebhook", {"drop_pending_updates": False})
                        webhook_deleted = True
                    await self._poll(http)
                    delay = 0.0
                except Exception as exc:  # the API, the network, or the inbox: tried again
                    error = str(exc) or type(exc).__name__
                    fields = {"workspace": self.key.workspace_id, "error": error}
                    log.warning("telegram polling failed", extra=fields)
                    self._failed(self.key.workspace_id, error)
                    delay = min(max(1.0, delay * 2), MAX_BACKOFF_S)
                    await asyncio.sleep(delay)

    async def _poll(self, http: aiohttp.ClientSession) -> None:
        params: dict[str, Any] = {"timeout": POLL_TIMEOUT_S}
        if self._offset is not None:
            params["offset"] = self._offset
        updates = await self._call(http, "getUpdates", params)
        if not isinstance(updates, list):
            raise PollFailed("getUpdates answered something that is not a list")
        await asyncio.gather(*(self._store(update) for update in updates))
        ids = [u["update_id"] for u in updates if isinstance(u, dict) and "update_id" in u]
        if ids:  # stored: the next call confirms them to Telegram
            self._offset = max(ids) + 1

    async def _store(self, data: object) -> None:
        found = shape.problem(data)
        if found is not None:  # never from Telegram; nothing could act on it
            fields = {"workspace": self.key.workspace_id, "reason": found}
            log.warning("telegram update refused", extra=fields)
            return
        update = cast(dict[str, Any], data)
        workspace = self.key.workspace_id
        body = json.dumps(update)
        key = str(update["update_id"])
        where = shape.place(update)
        await self._put(Arrival("telegram", workspace, where, key, body, POLLED))

    async def _call(self, http: aiohttp.ClientSession, method: str, params: dict[str, Any]) -> Any:
        async with http.post(self._url + method, json=params) as response:
            answer = await response.json(content_type=None)
        if not isinstance(answer, dict) or not answer.get("ok"):
            description = answer.get("description") if isinstance(answer, dict) else None
            raise PollFailed(f"{method}: {description or f'HTTP {response.status}'}")
        return answer.get("result")
