"""`switchboard run`: the runtime, the bridge, every configured platform and the HTTP server in
one process and one event loop, composed from parts (`App._parts_in_order`: their order, in
one place; `bridge/parts.py`: how they open, run, are reconfigured and close)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TextIO

from adapters.admin import AdminDeps
from adapters.server.assembly import mcp_servers, open_runtime, runtime_roster
from adapters.server.bots import restart
from adapters.server.intake import WayIn
from adapters.server.leadership import Leadership, exit_at_once, replica_name
from adapters.server.live import LiveAdapters
from adapters.server.providers import tell_disabled
from adapters.server.reload import Reloader
from adapters.server.role import Role
from adapters.server.serving import HttpServer
from adapters.server.terminal import TerminalChat
from adapters.server.workspace_leases import WorkspaceLeases
from bridge.parts import Change, Part, Parts, Refused, StopFailed
from bridge.service import Bridge
from bridge.system_notices import SystemNotices
from config.current import CurrentConfig
from config.diff import ReloadReport
from config.edit import WorkspaceEdit
from config.schema import SwitchboardConfig
from config.secrets import Secrets, known_secrets
from runtime.clock import Clock
from runtime.engine import Runtime
from runtime.errors import ProviderError
from runtime.providers.base import Provider
from runtime.providers.cooldowns import Candidate

log = logging.getLogger(__name__)

DRAIN_S = 3.0  # at stop, how long replies already on their way get to go out


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
        self.path = path  # the file it was started from: what `reload` reads again
        self._door_process = doors  # the doors in a process of their own (see intake.py)
        self._provider = provider
        self._clock = clock
        self.terminal = TerminalChat(stdin, stdout)
        self.parts = Parts()
        self._notices: set[asyncio.Task[int]] = set()  # system notices on their way to chat
        self.role = Role(self.replica, on_lease_lost, self.parts.activate, self.parts.lead)
        self.reloader = Reloader(self, config)
        self.runtime: Runtime
        self.bridge: Bridge
        self.way_in: WayIn
        self.live: LiveAdapters
        self.http: HttpServer
        self.workspace_leases: WorkspaceLeases | None = None  # replicas: whose bots run here

    def _parts_in_order(self) -> Iterator[Part]:
        """Opened in this order at start, each taken once those before it are open (it may
        use what they built); run in this order once all are open, and their `once` where
        the fleet's once-only work runs (at once on SQLite, on taking the `active` lease on
        PostgreSQL: `role.py`); reconfigured in this order by a reload; closed in reverse."""
        # Last to close: every part below uses the store.
        yield Part(
            "runtime", self._runtime, reconfigure=self._reconfigure_runtime, once=self._resume
        )
        # The config every part reads: a reload replaces it here, for the parts below.
        yield Part("config", reconfigure=lambda change: self.current.replace(change.after))
        # Replicas: the lease is renewed until the work has stopped, then given up.
        yield Part("lease", self._lease)
        yield Part("bridge", self._bridge)
        if self.config.storage.shared:  # held until the work has stopped, then given up
            yield Part("workspace leases", self._workspace_leases)
        yield from self.bridge.parts
        # Closed after the bots: what Socket Mode stored while stopping is kept.
        yield Part("intake", self._intake)
        yield Part("platforms", self._platforms, self._bots, self._reconfigure_bots)
        # Closed before the bots stop: messages held for their files stay held.
        yield self.bridge.files
        # Closed before the bots stop: nothing more is handed to them.
        yield self.way_in.replay(self.live.decoders)
        yield Part("drain", self._drain)  # replies on their way get DRAIN_S to go out
        # Closed before the drain: running turns end at a safe point, their replies drained.
        # Replicas: every one runs the turns of the sessions it claims, from the start.
        if self.config.storage.shared:
            yield Part("turns", self._homes)
        else:
            yield Part("turns", run=self._turns)
        yield Part("console", once=self._console)
        yield Part("http", self._serve)
        # First to close: nothing more is taken; what was is handled on the next start.
        yield self.way_in.serving(lambda: self.http.doors())
        if self.config.storage.shared:  # once everything runs: workspaces claimed
            yield Part("workspaces", run=self._claiming_workspaces)
        # A standby stops trying for the lease at once; SQLite: active from the start.
        yield Part("role", self._role)

    async def start(self) -> None:
        """Open every part; if one fails to open, close those that did and re-raise.

        On PostgreSQL the process is a standby first: its HTTP doors store what comes in for
        the active replica, and it becomes the active one when the lease is free (this
        returns once the first try is over, and, if it won, once everything has started)."""
        try:
            await self.parts.open_all(self._parts_in_order())
        except BaseException:
            with contextlib.suppress(StopFailed):  # each logged; the start's error says more
                await self.stop()
            raise

    async def stop(self) -> None:
        """A clean stop: replies already on their way get a moment to go out; anything still
        queued or running is in the database and resumes on the next start. A reload under
        way finishes first; any asked for later is refused. Raises `StopFailed` naming the
        parts that failed to stop (every other part stopped)."""
        async with self.role.stopping_now():
            await self.parts.close()

    async def wait(self, stop: asyncio.Event) -> None:
        """Until `stop` is set; or, when the console's input ends (Ctrl-D, the end of a piped
        file), until the agent has finished and its replies have gone out."""
        stopper: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
        reading, leading = self.terminal.reading, self.role.leading
        try:
            if reading is None:
                waiting: set[asyncio.Future[Any]] = {stopper}
                if leading is not None:
                    waiting.add(leading)
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if leading is not None and leading.done():
                    leading.result()  # an activation that failed: raised to the caller
                return
            await asyncio.wait({stopper, reading}, return_when=asyncio.FIRST_COMPLETED)
            if stop.is_set() or self.terminal.left_at_once():
                return
            settled: asyncio.Future[Any] = asyncio.ensure_future(self.bridge.settle())
            await asyncio.wait({stopper, settled}, return_when=asyncio.FIRST_COMPLETED)
            settled.cancel()
        finally:
            stopper.cancel()

    async def reload(self) -> ReloadReport:
        return await self.reloader.reload()

    async def apply(self, new: SwitchboardConfig) -> ReloadReport:
        return await self.reloader.apply(new)

    async def edit(self, workspace_id: str, change: WorkspaceEdit) -> ReloadReport:
        return await self.reloader.edit(workspace_id, change)

    @property
    def config(self) -> SwitchboardConfig:
        """The config running now: a reload replaces it."""
        return self.current()

    @property
    def active(self) -> bool:
        return self.role.active

    @property
    def leadership(self) -> Leadership | None:
        return self.role.leadership

    @property
    def port(self) -> int:
        return self.http.port

    @property
    def console_mounted(self) -> bool:
        return self.http.console_mounted

    # -- the lives of the parts ----------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _runtime(self) -> AsyncIterator[None]:
        self.runtime = await open_runtime(
            self.config,
            provider=self._provider,
            clock=self._clock,
            resume=not self.config.storage.shared,  # a replica resumes once active
            secrets=self.secrets,
            on_disabled=self._provider_refused,
        )
        yield
        await self.runtime.close()

    @contextlib.asynccontextmanager
    async def _resume(self) -> AsyncIterator[None]:
        if self.config.storage.shared:  # the turns run where their sessions are held
            await self.runtime.alarm.start()
        yield

    async def _reconfigure_runtime(self, change: Change) -> None:
        """The agents and tools of the new config (a command tool's input schema that is not
        JSON Schema refuses it), and its MCP servers."""
        try:
            self.runtime.reconfigure(*runtime_roster(change.after))
        except ValueError as exc:
            raise Refused(str(exc)) from None
        await self.runtime.tools.mcp.apply(mcp_servers(change.after))

    @contextlib.asynccontextmanager
    async def _lease(self) -> AsyncIterator[None]:
        yield
        await self.role.release(self.runtime.stop_workers)

    @contextlib.asynccontextmanager
    async def _bridge(self) -> AsyncIterator[None]:
        self.bridge = Bridge(self.current, self.runtime)
        if self.config.storage.shared:
            self.bridge.placement.split()  # each workspace's platform side on one replica
        yield

    @contextlib.asynccontextmanager
    async def _workspace_leases(self) -> AsyncIterator[None]:
        storage = self.config.storage
        self.workspace_leases = WorkspaceLeases(
            self.runtime.store,
            self.replica,
            storage.lease_ttl_s,
            lambda: [w.id for w in self.config.workspaces],
            self.bridge.placement,
            self.role.changing,
            serve=self._serve_workspace,
            leave=self._leave_workspace,
        )
        yield
        await self.workspace_leases.release()

    @contextlib.asynccontextmanager
    async def _claiming_workspaces(self) -> AsyncIterator[None]:
        assert self.workspace_leases is not None
        self.workspace_leases.start()
        yield
        await self.workspace_leases.stop_claiming()

    async def _serve_workspace(self, workspace_id: str) -> None:
        """This replica holds the workspace's lease now: its bots start, and what its last
        holder left is taken up (run fenced by the lease, as the tasks it starts)."""
        try:
            await self.live.start(workspace_id, self.config.server.public_url)
        except Exception as exc:  # the others' work goes on; a reload tries it again
            log.error(
                "workspace's bots did not start here",
                extra={"workspace": workspace_id, "error": self.secrets.mask(str(exc))},
            )
        await self.bridge.serve(workspace_id)
        await self.way_in.serve(workspace_id)

    async def _leave_workspace(self, workspace_id: str, graceful: bool) -> None:
        """The workspace's work here stops: `graceful` (let go to another replica) lets the
        sends under way finish first; else (its lease lost) at once."""
        await self.way_in.leave(workspace_id)
        await self.bridge.leave(workspace_id, graceful=graceful)
        await self.live.stop(workspace_id)

    @contextlib.asynccontextmanager
    async def _intake(self) -> AsyncIterator[None]:
        failed = self.bridge.metrics.platform_call_failed
        self.way_in = WayIn(
            self.config,
            self.bridge,
            failed,
            door_process=self._door_process,
            doors_failing=self._doors_failing,
        )
        yield
        await self.way_in.close()

    def _doors_failing(self, failures: int, why: str) -> None:
        """The door process keeps failing to start: each workspace's primary operator told."""
        notices = SystemNotices(self.current, self.bridge.store, self.bridge.router)
        port = self.http.port or self.config.server.port
        self._tell(notices.doors_failing(port, failures, why, self.runtime.clock.wall()))

    def _provider_refused(self, candidate: Candidate, error: ProviderError) -> None:
        """A provider refused its key: logged, and each workspace's primary operator told."""
        tell_disabled(candidate, error)
        notices = SystemNotices(self.current, self.bridge.store, self.bridge.router)
        why = self.secrets.mask(str(error))
        self._tell(notices.provider_refused(candidate.label, why, self.runtime.clock.wall()))

    def _tell(self, told: Coroutine[Any, Any, int]) -> None:
        task = asyncio.get_running_loop().create_task(told, name="system-notice")
        self._notices.add(task)  # kept until done
        task.add_done_callback(self._notice_done)

    def _notice_done(self, task: asyncio.Task[int]) -> None:
        self._notices.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("system notice not sent", exc_info=error)

    @contextlib.asynccontextmanager
    async def _platforms(self) -> AsyncIterator[None]:
        """The terminal first, then the bots (built, not started): the bridge sends through
        them, and where an operator has several, a notification goes to the first. At the
        stop every bot stops, a standby's (never started) too: what it holds is let go."""
        self.live = LiveAdapters(self.bridge, self.way_in.intake.put)
        self.terminal.attach(self.bridge)
        self.live.add_all(self.config.workspaces)
        yield
        for workspace_id in self.live.workspaces():
            await self.live.stop(workspace_id)

    @contextlib.asynccontextmanager
    async def _bots(self) -> AsyncIterator[None]:
        """The bots of the workspaces served here (replicas: none yet; each starts as its
        lease is taken, `_serve_workspace`)."""
        for workspace_id in self.live.workspaces():
            if self.bridge.placement.serves(workspace_id):
                await self.live.start(workspace_id, self.config.server.public_url)
        yield

    async def _reconfigure_bots(self, change: Change) -> None:
        placement = self.bridge.placement

        def serve(workspace_id: str) -> bool:  # replicas: where its lease is held
            return self.role.activated and placement.serves(workspace_id)

        failures = await restart(self.live, change, serve=serve, fenced=placement.fenced)
        change.failures.extend(self.secrets.mask(failure) for failure in failures)

    @contextlib.asynccontextmanager
    async def _drain(self) -> AsyncIterator[None]:
        yield
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.bridge.outbox.idle(), DRAIN_S)

    @contextlib.asynccontextmanager
    async def _homes(self) -> AsyncIterator[None]:
        storage = self.config.storage
        await self.runtime.run_homes(self.replica, storage.lease_ttl_s, storage.max_sessions)
        async with self._turns():
            yield

    @contextlib.asynccontextmanager
    async def _turns(self) -> AsyncIterator[None]:
        yield
        cut = await self.runtime.hand_back(self.config.server.stop_grace_s)
        if cut:
            log.warning(
                "turns still running at the end of the stop's grace; cut, to resume later",
                extra={"sessions": cut, "grace_s": self.config.server.stop_grace_s},
            )

    @contextlib.asynccontextmanager
    async def _console(self) -> AsyncIterator[None]:
        self.terminal.start(self.bridge)
        yield
        await self.terminal.stop()

    @contextlib.asynccontextmanager
    async def _serve(self) -> AsyncIterator[None]:
        self.http = HttpServer(self.bridge, self.way_in)
        admin = AdminDeps(self.bridge, self.current, reload=self.reload, edit=self.edit)
        await self.http.open(admin, replica=self.replica, active=lambda: self.active)
        yield
        await self.http.close()

    @contextlib.asynccontextmanager
    async def _role(self) -> AsyncIterator[None]:
        shared = self.runtime.store if self.config.storage.shared else None
        await self.role.take_up(shared, self.config.storage.lease_ttl_s)
        yield
        await self.role.stand_down()
