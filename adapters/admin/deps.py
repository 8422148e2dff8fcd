"""What the console's pages reach of the running App."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from bridge import Bridge
from config.schema import SwitchboardConfig


@dataclass(frozen=True, slots=True)
class AdminDeps:
    bridge: Bridge
    # Always the config now running: it changes when a reload is applied.
    config: Callable[[], SwitchboardConfig]


DEPS = web.AppKey("deps", AdminDeps)
