"""The doors of every platform (`registry.py`), whichever process serves them: the door process
(`process.py`), or a main process that serves its port itself (inline, or a replica on
PostgreSQL). A request is checked by its platform's door, stored through the intake
(`adapters/intake/`), and only then answered; what a platform polls is stored the same way.
There is one way in, whichever process runs it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from adapters.doors.registry import kinds
from adapters.intake.door import Door
from adapters.intake.record import Arrival, Put
from bridge import cancel_and_wait

if TYPE_CHECKING:
    from bridge.placement import Placement
    from config.schema import SwitchboardConfig

log = logging.getLogger(__name__)

Failed = Callable[[str, str, str], None]
"""A poll that failed: the platform, the workspace, what went wrong."""


def door_keys(config: SwitchboardConfig) -> dict[str, Any]:
    """What every platform's door checks with, by platform, as JSON (it goes to the door
    process); a platform the config gives nothing to serve is left out."""
    found = {kind.platform: kind.keys(config) for kind in kinds()}
    return {platform: keys for platform, keys in found.items() if keys is not None}


class Doors:
    def __init__(self, keys: dict[str, Any], put: Put, failed: Failed) -> None:
        """`put` stores into the intake; `failed` hears of each failed poll."""
        self._put = put
        self._doors: dict[str, Door] = {
            kind.platform: kind.door(put, _failed_on(kind.platform, failed)) for kind in kinds()
        }
        # What is polled, by workspace and key (None: not polling).
        self._polling: dict[tuple[str, Hashable], asyncio.Task[None]] | None = None
        self._placement: Placement | None = None  # None: every workspace's (the door process)
        self.update(keys)

    def route(self, app: web.Application) -> None:
        for door in self._doors.values():
            door.route(app, self._store)

    def update(self, keys: dict[str, Any]) -> None:
        """The keys of the config just applied (`door_keys`)."""
        for platform, door in self._doors.items():
            door.update(keys.get(platform))
        if self._polling is not None:
            self._poll()

    def poll(self, placement: Placement | None = None) -> None:
        """Start polling what the platforms poll (and, after each update, what they poll
        then): in the door process, or in the main process for the workspaces it serves
        (replicas: those whose lease it holds, each poll fenced by it; `poll_again` when that
        changes)."""
        self._polling = {}
        if placement is not None:
            self._placement = placement
        self._poll()

    async def poll_again(self) -> None:
        """The workspaces served here changed: their polling starts or stops (a poll stopped
        has ended when this returns)."""
        if self._polling is not None:
            await cancel_and_wait(*self._poll())

    async def close(self) -> None:
        tasks = list((self._polling or {}).values())
        self._polling = None
        await cancel_and_wait(*tasks)

    def _poll(self) -> list[asyncio.Task[None]]:
        """Start what is to be polled now, and stop what is not: the polls stopped."""
        assert self._polling is not None
        placement = self._placement
        wanted = {
            key: poll
            for door in self._doors.values()
            for key, poll in door.pollers().items()
            if placement is None or placement.serves(key[0])
        }
        stopped = [self._polling.pop(key) for key in set(self._polling) - set(wanted)]
        for task in stopped:
            task.cancel()
        for key, poll in wanted.items():
            if key not in self._polling:
                context = None if placement is None else placement.context(key[0])
                self._polling[key] = asyncio.get_running_loop().create_task(
                    poll(), name="poll", context=context
                )
        return stopped

    async def _store(self, arrival: Arrival) -> bool:
        try:
            return await self._put(arrival)
        except Exception:  # not stored: a 500, and the platform sends it again
            fields = {"platform": arrival.platform, "workspace": arrival.workspace_id}
            log.exception("request not stored", extra=fields)
            raise web.HTTPInternalServerError(text="not stored; send it again") from None


def _failed_on(platform: str, failed: Failed) -> Callable[[str, str], None]:
    return lambda workspace, error: failed(platform, workspace, error)
