"""This process's HTTP server (`http.py`'s routes): on the port itself, or, behind the door
process, on a Unix socket whose only client is that process (`WayIn.open`)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from aiohttp import web

from adapters.admin import AdminDeps
from adapters.doors import slow_clients
from adapters.server.http import build_app, listen
from adapters.server.intake import WayIn
from bridge.service import Bridge

log = logging.getLogger(__name__)


class HttpServer:
    def __init__(self, bridge: Bridge, way_in: WayIn) -> None:
        self._bridge = bridge
        self._way_in = way_in
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.console_mounted = False  # the admin console was served from the start

    async def open(self, admin: AdminDeps, *, replica: str, active: Callable[[], bool]) -> None:
        """Serve every route; on the port itself unless the door process serves it (`doors`).
        `admin`: the console, mounted when the config names an admin."""
        config = self._bridge.config
        self.console_mounted = config.console_enabled()
        routes = build_app(
            self._bridge,
            self._way_in.doors(),
            admin if self.console_mounted else None,
            replica=replica,
            active=active,
            metrics_token=lambda: self._bridge.config.server.metrics_token,
        )
        if self._way_in.separate:  # behind the door process, which has timed out slow clients
            runner = web.AppRunner(routes, access_log=None)
        else:  # this process serves the port: any client may be slow
            headers_s, body_s = slow_clients.HEADERS_S, slow_clients.BODY_S
            runner = slow_clients.runner(routes, headers_s, body_s, access_log=None)
        await runner.setup()
        if self._way_in.separate:
            self._runner = runner
            return
        try:
            self._listening(await listen(runner, config.server.host, config.server.port))
        except BaseException:  # this part did not open: nothing else closes the runner
            await runner.cleanup()
            raise
        self._runner = runner

    async def doors(self) -> None:
        """Behind a door process: start it; it listens on the port."""
        if self._way_in.separate and self._runner is not None:
            self._listening(await self._way_in.open(self._runner, self._bridge.config))

    def _listening(self, port: int) -> None:
        self.port = port
        intake = "process" if self._way_in.separate else "inline"
        host = self._bridge.config.server.host
        log.info("http listening", extra={"host": host, "port": port, "intake": intake})

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
