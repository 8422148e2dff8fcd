"""Stopping the App as a killed process would leave the chat."""

from __future__ import annotations

import asyncio

from adapters.server.app import App


async def crash(app: App) -> None:
    """Nothing shown is cleared (the progress tasks end where they are, their messages and
    the store's record of them left as they were: a killed process writes nothing more, so
    the cancelled tasks may not record what they had not yet); the runtime's own shutdown
    marks the turn interrupted, as its recovery does after a kill."""
    presenter = app.bridge.presenter
    presenter._store = None  # what is recorded now is all a kill would have left
    for task in list(presenter._tasks):
        task.cancel()
    await asyncio.gather(*presenter._tasks, return_exceptions=True)
    await app.stop()
