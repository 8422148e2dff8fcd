"""`switchboard run`: the runtime, the bridge, every configured adapter and the HTTP server
in one process and one event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from aiohttp import web

from adapters.admin import AdminDeps
from adapters.console import CONSOLE, ConsoleAdapter, ConsoleTransport, Ending
from adapters.doors import slow_clients
from adapters.server.assembly import mcp_servers, open_runtime, runtime_roster
from adapters.server.http import build_app, listen
from adapters.server.intake import WayIn
from adapters.server.leadership import Leadership, exit_at_once, replica_name
from adapters.server.live import LiveAdapters
from adapters.server.reloading import report_fields
from adapters.slack.adapter import SlackAdapter
from adapters.telegram.adapter import TelegramAdapter
from bridge import Bridge
from config.current import CurrentConfig
from config.diff import ReloadReport, plan, unapplied
from config.edit import STALE, WorkspaceEdit, edit_workspace, version, write_atomically
from config.errors import ConfigError
from config.loading import env_file, load, parse, read_text
from config.schema import SwitchboardConfig
from config.secrets import Secrets, known_secrets
from runtime import Clock, Runtime
from runtime.providers import Provider
from runtime.records import Lease

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
        path: Path | None = None,
        replica: str | None = None,
        on_lease_lost: Callable[[str], None] = exit_at_once,
        doors: bool = False,
        secrets: Secrets | None = None,
    ) -> None:
        self.current = CurrentConfig(config)
        # Every secret the process knows, masked wherever text leaves it (the logs share it
        # when `switchboard run` passes it); a reload adds the new config's.
        self.secrets = secrets if secrets is not None else known_secrets(config, path)
        self.replica = replica or replica_name()
        self._on_lease_lost = on_lease_lost
        self.leadership: Leadership | None = None  # PostgreSQL: which replica is active
        self._leading: asyncio.Task[None] | None = None
        self.path = path  # the file it was started from: what `reload` reads again
        self._door_process = doors  # the doors in a process of their own (see intake.py)
        self.way_in: WayIn
        self._stdin = stdin
        self._stdout = stdout
        self._provider = provider
        self._clock = clock
        self._runner: web.AppRunner | None = None
        self._console: asyncio.Task[Ending] | None = None
        self._terminal = ConsoleTransport(stdout)
        self._reloading = asyncio.Lock()
        self._editing = asyncio.Lock()
        self._console_on = False
        self._closing = False  # set by `stop`: no reload starts bots after it
        self._live = False  # the bots run here (a standby's do not, until it takes over)
        # The file's config as last applied (its restart-needed sections included): what
        # the console's edit expects to find on disk.
        self._applied = config
        self.runtime: Runtime
        self.bridge: Bridge
        self.live: LiveAdapters
        self.port = 0

    @property
    def config(self) -> SwitchboardConfig:
        """The config running now: a reload replaces it."""
        return self.current()

    @property
    def telegram(self) -> dict[str, TelegramAdapter]:
        return self.live.telegram

    @property
    def slack(self) -> dict[str, SlackAdapter]:
        return self.live.slack

    @property
    def active(self) -> bool:
        """This process runs the turns (on SQLite, always; on PostgreSQL, while it holds the
        `active` lease)."""
        return self.leadership is None or self.leadership.active

    async def start(self) -> None:
        """Start everything; if any part fails to start, stop what did and re-raise.

        On PostgreSQL the process is a standby first: its HTTP doors store what comes in for
        the active replica, and it becomes the active one when the lease is free (this
        returns once the first try is over, and, if it won, once everything has started)."""
        shared = self.config.storage.shared
        self.runtime = await open_runtime(
            self.config,
            provider=self._provider,
            clock=self._clock,
            resume=not shared,
            secrets=self.secrets,
        )
        self.bridge = Bridge(self.current, self.runtime)
        self.way_in = WayIn(
            self.config,
            self.bridge,
            self.bridge.metrics.platform_call_failed,
            door_process=self._door_process,
        )
        self.live = LiveAdapters(self.bridge, self.way_in.intake.put)
        try:
            self._prepare()
            if not shared:
                await self._go_live()
                self._live = True
                return
            await self._serve_http()
            self.leadership = Leadership(
                self.runtime.store,
                self.replica,
                self.config.storage.lease_ttl_s,
                on_gained=self._activate,
                on_lost=self._on_lease_lost,
            )
            self._leading = asyncio.get_running_loop().create_task(
                self.leadership.run(), name="leadership"
            )
            settled = asyncio.ensure_future(self.leadership.settled.wait())
            await asyncio.wait({settled, self._leading}, return_when=asyncio.FIRST_COMPLETED)
            settled.cancel()
            if self._leading.done():
                self._leading.result()  # an activation that failed: raised here
            if self.leadership.failed is not None:
                raise self.leadership.failed
        except BaseException:
            await self.stop()
            raise

    async def _activate(self, lease: Lease) -> None:
        """This standby holds the lease now: take over what the last active replica left
        (its crash recovery), start the bots, and handle what standbys stored meanwhile."""
        async with self._reloading:  # a reload under way finishes first
            if self._closing:
                return
            await self._go_active()
            self._live = True

    async def _go_active(self) -> None:
        await self.runtime.resume()
        await self._go_live()

    def _prepare(self) -> None:
        consoles = [w for w in self.config.workspaces if w.console and w.console.enabled]
        if consoles:
            self.bridge.attach(self._terminal)
        self.live.add_all(self.config.workspaces)

    async def _go_live(self) -> None:
        consoles = [w for w in self.config.workspaces if w.console and w.console.enabled]
        metrics = self.bridge.metrics
        await self.bridge.start()
        for workspace_id in list(self.slack):  # bot identities first: events need them
            await self.live.start_slack(workspace_id)
        if self._runner is None:
            await self._serve_http()
        for workspace_id in list(self.telegram):
            await self.live.start_telegram(workspace_id, self.config.server.public_url)
        self.way_in.take(self.live.decoders)
        if consoles:
            data_dir = Path(self.config.storage.path).parent  # its history is kept there
            console = ConsoleAdapter(
                self.bridge, consoles[0], self._stdin, self._terminal, data_dir=data_dir
            )
            self._console = asyncio.get_running_loop().create_task(console.run())
            metrics.connection(CONSOLE.name, consoles[0].id, up=True)
            self._console.add_done_callback(  # input ended, failed or was stopped
                lambda _: metrics.connection(CONSOLE.name, consoles[0].id, up=False)
            )

    async def reload(self) -> ReloadReport:
        """Read the file the App was started from again and apply it (see `apply`)."""
        if self.path is None:
            return self._refused("this process was not started from a config file")
        try:
            new = load(self.path)
        except ConfigError as exc:
            return self._refused(str(exc))
        return await self.apply(new)

    async def apply(self, new: SwitchboardConfig) -> ReloadReport:
        """Run `new` (validated already, as `config.load` does): the workspaces it adds,
        changes or removes have their adapters stopped and started again with it; the others
        are not touched. Sections that cannot change live keep their running values and are
        reported as needing a restart."""
        async with self._reloading:
            if self._closing:
                return self._refused("Switchboard is stopping; start it again to apply the file")
            effective, report = plan(self.config, new)
            self.secrets.learn(known_secrets(new, self.path))  # before anything shows them
            if effective.console_enabled() and not self._console_on:  # not mounted at start
                restart = (*report.restart_needed, "admin")
                report = report.model_copy(update={"restart_needed": restart})
            try:
                self.runtime.reconfigure(*runtime_roster(effective))
            except ValueError as exc:  # a command tool's input schema is not JSON Schema
                return self._refused(f"{self.path or 'the new config'}: {exc}")
            await self.runtime.tools.mcp.apply(mcp_servers(effective))
            touched = (*report.changed, *report.removed)
            for workspace_id in touched:
                self.live.hold(workspace_id, True)
                await self.live.stop(workspace_id)
                self.live.remove(workspace_id)
            self.current.replace(effective)
            self._applied = new
            self.bridge.metrics.set_workspaces(w.id for w in effective.workspaces)
            failures: list[str] = []
            for workspace in effective.workspaces:
                if workspace.id in report.changed or workspace.id in report.added:
                    url = effective.server.public_url
                    failure = await self.live.restart(workspace, url, serve=self._live)
                    if failure is not None:
                        failures.append(self.secrets.mask(failure))
            for workspace_id in report.removed:
                self.live.hold(workspace_id, False)
            self.live.decode()  # what is stored for a removed workspace is dropped
            self.way_in.update(effective)
            if failures:
                report = report.model_copy(update={"errors": "\n".join(failures)})
            log.info("config applied", extra=report_fields(report))
            return report

    async def edit(self, workspace_id: str, change: WorkspaceEdit) -> ReloadReport:
        """The console's edit of a workspace: written into the file (only the keys it
        changes), validated as check-config does before anything is written, then applied.
        Refused when the file holds changes not applied yet: they are not this admin's."""
        async with self._editing:
            workspace = self.current.workspace(workspace_id)
            if self.path is None:
                return self._refused("this process was not started from a config file")
            if self._closing:
                return self._refused("Switchboard is stopping; the edit was not made")
            if workspace is None:
                return self._refused(f"workspace {workspace_id} is no longer configured")
            if change.based_on is not None and change.based_on != version(workspace):
                return self._refused(STALE)
            try:
                original = read_text(self.path)
                pending = unapplied(self._applied, original, self.path)
                if pending:
                    return self._refused(
                        f"{self.path} has changes not yet applied ({pending}); reload it first "
                        "(switchboard reload, or the global admin's Reload), then edit"
                    )
                text = edit_workspace(original, workspace, change)
                new = parse(text, self.path, {**env_file(self.path), **os.environ})
                write_atomically(self.path, text)
            except ConfigError as exc:
                return self._refused(str(exc))
            return await self.apply(new)

    def _refused(self, errors: str) -> ReloadReport:
        report = ReloadReport(ok=False, errors=errors)
        log.warning("config refused; the running config stays", extra=report_fields(report))
        return report

    async def _serve_http(self) -> None:
        server = self.config.server
        console = AdminDeps(self.bridge, self.current, reload=self.reload, edit=self.edit)
        self._console_on = self.config.console_enabled()
        routes = build_app(
            self.bridge,
            self.way_in.doors(),
            console if self._console_on else None,
            replica=self.replica,
            active=lambda: self.active,
            metrics_token=lambda: self.config.server.metrics_token,
        )
        if not self.way_in.separate:  # this process serves the port: any client may be slow
            self._runner = slow_clients.runner(
                routes, slow_clients.HEADERS_S, slow_clients.BODY_S, access_log=None
            )
        else:  # behind the door process, its only client, which has timed out the slow ones
            self._runner = web.AppRunner(routes, access_log=None)
        await self._runner.setup()
        try:
            if self.way_in.separate:
                self.port = await self.way_in.open(self._runner, self.config)
            else:
                self.port = await listen(self._runner, server.host, server.port)
        except BaseException:
            await self._runner.cleanup()
            self._runner = None
            raise
        intake = "process" if self.way_in.separate else "inline"
        log.info("http listening", extra={"host": server.host, "port": self.port, "intake": intake})

    async def wait(self, stop: asyncio.Event) -> None:
        """Until `stop` is set; or, when the console's input ends (Ctrl-D, the end of a piped
        file), until the agent has finished and its replies have gone out."""
        stopper: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
        try:
            if self._console is None:
                waiting: set[asyncio.Future[Any]] = {stopper}
                if self._leading is not None:
                    waiting.add(self._leading)
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if self._leading is not None and self._leading.done():
                    self._leading.result()  # an activation that failed: raised to the caller
                return
            await asyncio.wait({stopper, self._console}, return_when=asyncio.FIRST_COMPLETED)
            if stop.is_set() or _quit_now(self._console):
                return
            settled: asyncio.Future[Any] = asyncio.ensure_future(self.bridge.settle())
            await asyncio.wait({stopper, settled}, return_when=asyncio.FIRST_COMPLETED)
            settled.cancel()
        finally:
            stopper.cancel()

    async def stop(self) -> None:
        """A clean stop: replies already on their way get a moment to go out; anything still
        queued or running is in the database and resumes on the next start. A reload under
        way finishes first; any asked for later is refused."""
        self._closing = True
        async with self._reloading:
            await self._stop()

    async def _end_leadership(self) -> None:
        if self._leading is not None:
            self._leading.cancel()
            with contextlib.suppress(BaseException):
                await self._leading
            self._leading = None

    async def _stop(self) -> None:
        if not self.active:  # a standby stops trying for the lease at once
            await self._end_leadership()
        await self.way_in.close_doors()  # nothing more is taken; what was is handled next start
        if self._console is not None:
            self._console.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._console
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.bridge.outbox.idle(), DRAIN_S)
        await self.way_in.replayer.close()  # nothing more is handed to the bots
        await self.bridge.downloads.close()  # before the bots go: held messages stay held
        for workspace_id in dict.fromkeys([*self.telegram, *self.slack]):
            await self.live.stop(workspace_id)
        await self.way_in.close()
        await self.bridge.close()
        if self._runner is not None:
            await self._runner.cleanup()
        if self.leadership is not None:  # the lease is renewed until the work has stopped
            await self.runtime.stop_workers()
            await self._end_leadership()
            await self.leadership.release()
        await self.runtime.close()


def _quit_now(console: asyncio.Task[Ending]) -> bool:
    """The operator left the terminal chat without waiting for the agent (Ctrl-C twice)."""
    return (
        not console.cancelled() and console.exception() is None and console.result() is Ending.NOW
    )
