"""What the console's pages reach of the running App."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from bridge.service import Bridge
from config.diff import ReloadReport
from config.edit import WorkspaceEdit
from config.schema import SwitchboardConfig


@dataclass(frozen=True, slots=True)
class AdminDeps:
    bridge: Bridge
    # Always the config now running: it changes when a reload is applied.
    config: Callable[[], SwitchboardConfig]
    # Reload the file the App was started from; None when it was not started from one.
    reload: Callable[[], Awaitable[ReloadReport]] | None = None
    # Write a workspace's edit into that file, then apply it (refused: the file is untouched).
    edit: Callable[[str, WorkspaceEdit], Awaitable[ReloadReport]] | None = None


DEPS = web.AppKey("deps", AdminDeps)
