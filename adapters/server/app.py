"""`switchboard run`: the runtime, the bridge, every configured adapter and the HTTP server
in one process and one event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, TextIO

from aiohttp import web

from adapters.admin import AdminDeps
from adapters.console import CONSOLE, ConsoleAdapter, ConsoleTransport
from adapters.server.assembly import open_runtime
from adapters.server.http import build_app
from adapters.server.workspaces import FilesPerWorkspace, PerWorkspace
from adapters.slack import SLACK, SlackAdapter, SlackFront
from adapters.slack.files import SlackFiles
from adapters.telegram import TELEGRAM, TelegramAdapter, TelegramFront
from adapters.telegram.files import TelegramFiles
from bridge import Bridge
from config.errors import ConfigError
from config.schema import SwitchboardConfig
from runtime import Clock, Runtime
from runtime.providers import Provider

log = logging.getLogger(__name__)

DRAIN_S = 3.0


class App:
    def __init__(
        self,
        config: SwitchboardConfig,
        *,
        stdin: TextIO,
        stdout: TextIO,
        provider: Provider | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.config = config
        self._stdin = stdin
        self._stdout = stdout
        self._provider = provider
        self._clock = clock
        self._runner: web.AppRunner | None = None
        self.telegram: dict[str, TelegramAdapter] = {}
        self.slack: dict[str, SlackAdapter] = {}
        self._console: asyncio.Task[None] | None = None
        self.runtime: Runtime
        self.bridge: Bridge
        self.port = 0

    async def start(self) -> None:
        """Start everything; if any part fails to start, stop what did and re-raise."""
        self.runtime = await open_runtime(self.config, provider=self._provider, clock=self._clock)
        self.bridge = Bridge(self.config, self.runtime)
        try:
            await self._start_parts()
        except BaseException:
            await self.stop()
            raise

    async def _start_parts(self) -> None:
        consoles = [w for w in self.config.workspaces if w.console and w.console.enabled]
        if consoles:
            self.bridge.attach(ConsoleTransport(self._stdout))
        metrics = self.bridge.metrics
        bots = PerWorkspace(TELEGRAM, metrics)
        bot_files = FilesPerWorkspace(TELEGRAM.name, TelegramFiles.max_bytes)
        for workspace in self.config.workspaces:
            if workspace.telegram is not None:
                self.telegram[workspace.id] = TelegramAdapter(self.bridge, workspace)
                bots.by_workspace[workspace.id] = self.telegram[workspace.id].transport
                bot_files.by_workspace[workspace.id] = self.telegram[workspace.id].files
                metrics.connection(TELEGRAM.name, workspace.id, up=False)
        if self.telegram:
            self.bridge.attach(bots)
            self.bridge.attach_files(bot_files)
        slack = PerWorkspace(SLACK, metrics)
        slack_files = FilesPerWorkspace(SLACK.name, SlackFiles.max_bytes)
        for workspace in self.config.workspaces:
            if workspace.slack is not None:
                self.slack[workspace.id] = SlackAdapter(self.bridge, workspace)
                slack.by_workspace[workspace.id] = self.slack[workspace.id].transport
                slack_files.by_workspace[workspace.id] = self.slack[workspace.id].files
                metrics.connection(SLACK.name, workspace.id, up=False)
        if self.slack:
            self.bridge.attach(slack)
            self.bridge.attach_files(slack_files)
        await self.bridge.start()
        for team in self.slack.values():  # bot identities first: events need them
            await team.start()
            metrics.connection(SLACK.name, team.workspace.id, up=True)
        await self._serve_http()
        for bot in self.telegram.values():
            await bot.start(self.config.server.public_url)
            metrics.connection(TELEGRAM.name, bot.workspace.id, up=True)
        if consoles:
            console = ConsoleAdapter(self.bridge, consoles[0], self._stdin)
            self._console = asyncio.get_running_loop().create_task(console.run())
            metrics.connection(CONSOLE.name, consoles[0].id, up=True)
            self._console.add_done_callback(  # input ended, failed or was stopped
                lambda _: metrics.connection(CONSOLE.name, consoles[0].id, up=False)
            )

    async def _serve_http(self) -> None:
        server = self.config.server
        console = AdminDeps(self.bridge, lambda: self.config)
        routes = build_app(
            self.bridge,
            SlackFront(self.slack.values()),
            TelegramFront(self.telegram.values()),
            console if self.config.console_enabled() else None,
        )
        self._runner = web.AppRunner(routes, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, server.host, server.port)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            self._runner = None
            raise ConfigError(
                f"cannot listen on {server.host}:{server.port} ({exc.strerror}); is another "
                "Switchboard running? Set [server] port in the config to use another port."
            ) from None
        sockets = self._runner.addresses
        self.port = int(sockets[0][1]) if sockets else server.port
        log.info("http listening", extra={"host": server.host, "port": self.port})

    async def wait(self, stop: asyncio.Event) -> None:
        """Until `stop` is set; or, when the console's input ends (Ctrl-D, the end of a piped
        file), until the agent has finished and its replies have gone out."""
        stopper: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
        try:
            if self._console is None:
                await stopper
                return
            await asyncio.wait({stopper, self._console}, return_when=asyncio.FIRST_COMPLETED)
            if stop.is_set():
                return
            settled: asyncio.Future[Any] = asyncio.ensure_future(self.bridge.settle())
            await asyncio.wait({stopper, settled}, return_when=asyncio.FIRST_COMPLETED)
            settled.cancel()
        finally:
            stopper.cancel()

    async def stop(self) -> None:
        """A clean stop: replies already on their way get a moment to go out; anything still
        queued or running is in the database and resumes on the next start."""
        if self._console is not None:
            self._console.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._console
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.bridge.outbox.idle(), DRAIN_S)
        await self.bridge.downloads.close()  # before the bots go: held messages stay held
        for bot in self.telegram.values():
            with contextlib.suppress(Exception):  # a bot that never started has nothing to stop
                await bot.stop()
            self.bridge.metrics.connection(TELEGRAM.name, bot.workspace.id, up=False)
        for team in self.slack.values():
            await team.stop()
            self.bridge.metrics.connection(SLACK.name, team.workspace.id, up=False)
        await self.bridge.close()
        if self._runner is not None:
            await self._runner.cleanup()
        await self.runtime.close()
