"""What Slack calls a channel ("#ops") and a person ("Alice"): its events carry only ids.

Asked of the Web API (`conversations.info`, `users.info`) once per id and kept for an hour,
each question bounded in time. An answer that does not come (a missing scope, a rate limit,
no network) leaves the id as the name, with one warning per id (an hour): a name is never worth
losing or holding up a message.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

LOOKUP_TIMEOUT_S = 1.0  # both questions together: the message waits no longer for a name
TTL_S = 3600.0  # a channel renamed, a person who changed their name: seen within the hour
MAX_KEPT = 2000  # ids kept per workspace, the least recently used dropped first


class _Cache:
    """Names by id, each for `TTL_S`, at most `MAX_KEPT`; None: asked, and Slack did not say."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, tuple[float, str | None]] = OrderedDict()

    def get(self, key: str) -> tuple[bool, str | None]:
        found = self._kept.get(key)
        if found is None or time.monotonic() - found[0] > TTL_S:
            return False, None
        self._kept.move_to_end(key)
        return True, found[1]

    def put(self, key: str, name: str | None) -> None:
        self._kept[key] = (time.monotonic(), name)
        self._kept.move_to_end(key)
        while len(self._kept) > MAX_KEPT:
            self._kept.popitem(last=False)


class SlackNames:
    def __init__(self, client: AsyncWebClient, workspace_id: str) -> None:
        self._client = client
        self._workspace = workspace_id
        self._cache = _Cache()  # an id Slack did not name is asked again only after TTL_S

    async def of(self, channel: str, user: str, *, direct: bool) -> tuple[str | None, str | None]:
        """(the channel's name, "#ops", or None in a DM; the person's name), None where Slack
        did not tell within `LOOKUP_TIMEOUT_S`."""
        if direct:
            return None, await self._known(f"user:{user}", lambda: self._person(user))
        place_key, person_key = f"channel:{channel}", f"user:{user}"
        (place_kept, place), (person_kept, person) = (
            self._cache.get(place_key),
            self._cache.get(person_key),
        )
        if place_kept and person_kept:  # the usual case: no tasks started to read two names
            return place, person
        named_place, named_person = await asyncio.gather(
            self._known(place_key, lambda: self._channel(channel)),
            self._known(person_key, lambda: self._person(user)),
        )
        return named_place, named_person

    async def _known(self, key: str, ask: Callable[[], Awaitable[str | None]]) -> str | None:
        cached, name = self._cache.get(key)
        if cached:
            return name
        try:
            async with asyncio.timeout(LOOKUP_TIMEOUT_S):
                name = await ask()
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            self._warn(key, exc)
            name = None
        self._cache.put(key, name)
        return name

    async def _channel(self, channel: str) -> str | None:
        answer = await self._client.conversations_info(channel=channel)
        name = _text((answer.get("channel") or {}).get("name"))
        return f"#{name}" if name else None

    async def _person(self, user: str) -> str | None:
        answer = await self._client.users_info(user=user)
        found = answer.get("user") or {}
        profile = found.get("profile") or {}
        return (
            _text(profile.get("display_name"))
            or _text(profile.get("real_name"))
            or _text(found.get("real_name"))
            or _text(found.get("name"))
        )

    def _warn(self, key: str, exc: Exception) -> None:
        error = exc.response.get("error") if isinstance(exc, SlackApiError) else None
        log.warning(
            "slack name not found; the id stands for it (a Slack app needs the scopes "
            "channels:read, groups:read and users:read to name channels and people)",
            extra={
                "workspace": self._workspace,
                "id": key,
                "error": error or str(exc) or type(exc).__name__,
            },
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
