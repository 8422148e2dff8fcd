"""Stopping background tasks: every layer's `stop`/`close` cancels its tasks and waits until
they have ended, so nothing of theirs runs on after the part that owns them has closed."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)


async def cancel_and_wait(*tasks: asyncio.Future[Any] | None) -> None:
    """Cancel each task (None is skipped) and wait until all have ended. What they end with
    is not raised here: the caller is stopping them, and a failure of one must not stop the
    caller's closing of the rest; an error other than the cancellation is logged. The
    caller's own cancellation while it waits is raised, as it should be."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    if not running:
        return
    ended = await asyncio.gather(*running, return_exceptions=True)
    for task, outcome in zip(running, ended, strict=True):
        if isinstance(outcome, Exception):
            log.warning(
                "a task ended with an error as it was stopped",
                extra={"task": _name(task), "error": repr(outcome)},
            )


def _name(task: asyncio.Future[Any]) -> str:
    return task.get_name() if isinstance(task, asyncio.Task) else type(task).__name__
