"""The bridge as one object: adapters call `receive`, attach a transport, and the bridge
does the rest (trust, commands, sessions, routing, durable delivery, progress)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from bridge import health
from bridge.attachments.downloads import Downloads
from bridge.attachments.intake import FileIntake
from bridge.attachments.source import FileSource
from bridge.automation.runs import Runs
from bridge.automation.schedules import Schedules
from bridge.automation.steering import Automations
from bridge.automation.triggers import Triggers
from bridge.commands import Commands
from bridge.dispatch import Dispatcher
from bridge.health import HealthLine
from bridge.health_keeper import HealthKeeper
from bridge.ingress import Ingress
from bridge.ledger_followers import LedgerFollowers
from bridge.metrics import Metrics
from bridge.outbox import Outbox
from bridge.pairing import Pairing
from bridge.parts import Change, Part, Parts
from bridge.placement import Placement
from bridge.platforms import Platforms
from bridge.progress import ProgressPresenter
from bridge.ratelimit import ProgressBudget
from bridge.retention import Retention
from bridge.routing import Router
from bridge.sessions import Sessions
from bridge.spend.gate import BudgetGate
from bridge.status import Status
from bridge.store.automation import AutomationStore
from bridge.store.health import HealthStore
from bridge.store.store import BridgeStore
from bridge.transport import Transport
from bridge.types import InboundChat, Route
from bridge.verdicts import Outcome
from config.current import CurrentConfig
from config.schema import SwitchboardConfig, WorkspaceConfig
from config.secrets import Secrets
from runtime.engine import Runtime


class Bridge:
    def __init__(
        self,
        config: SwitchboardConfig | CurrentConfig,
        runtime: Runtime,
        *,
        progress_interval_s: float = 4.0,
    ) -> None:
        # Every part reads the one holder: a reload that replaces it is seen everywhere.
        self.current = config if isinstance(config, CurrentConfig) else CurrentConfig(config)
        config = self.current()
        self.runtime = runtime
        self.metrics = Metrics((w.id for w in config.workspaces), wall=runtime.clock.wall)
        self.store = BridgeStore(runtime.store)
        # Whose platform side runs here: every workspace's, until replicas split them.
        self.placement = Placement()
        self.store.sent_here = self.placement.serves_key
        # The running platforms: each part that sends, or needs a platform's facts, gets it.
        self.platforms = Platforms(runtime.clock)
        self.outbox = Outbox(
            self.store, runtime.clock, self.metrics, self.platforms, self.placement
        )
        self.sessions = Sessions(runtime, self.store)
        self.router = Router(
            self.current, runtime, self.sessions, self.platforms, self.outbox.failed_routes
        )
        self.presenter = ProgressPresenter(
            self.platforms,
            runtime.clock,
            progress_interval_s,
            store=self.store,
            secrets=self.secrets,
            placement=self.placement,
        )
        self.pairing = Pairing(self.store, self.router, runtime.clock)
        # Work with no operator message: schedules, triggers, and the runs they start.
        self.automation = AutomationStore(runtime.store)
        self.runs = Runs(runtime, self.store, self.automation, self.router)
        self.schedules = Schedules(
            self.current, runtime, self.store, self.automation, self.runs, self.metrics
        )
        self.triggers = Triggers(self.current, self.runs, self.metrics)
        self.automations = Automations(self.current, runtime, self.schedules, self.automation)
        self.health = HealthKeeper(
            HealthStore(runtime.store), runtime.clock, self._health_everywhere, self._replica
        )
        status = Status(runtime, self.store, self.health_of)
        commands = Commands(runtime, self.sessions, status, self.pairing, self.automations)
        self.downloads = Downloads(self.current, runtime, self.store, self.sessions, self.placement)
        files = FileIntake(config.attachments, self.store, self.downloads)
        self.ingress = Ingress(
            self.current,
            runtime,
            self.store,
            self.sessions,
            self.platforms,
            self.outbox,
            commands,
            self.metrics,
            files,
            self.pairing,
        )
        self.dispatcher = Dispatcher(
            runtime, self.store, self.router, self.presenter, self.metrics, self.outbox.wake
        )
        self.followers = LedgerFollowers(
            runtime, self.store, self.placement, self.dispatcher.handle
        )
        self.retention = Retention(
            config.retention,
            runtime.store,
            self.store,
            lambda: self.followers.handled_everywhere([w.id for w in self.config.workspaces]),
        )
        self._alone = Parts()  # started without the App (`start`)

    @property
    def parts(self) -> list[Part]:
        """Its parts, in the order they start (and close in reverse), for the process to
        open among its own. Not `downloads`: see `files`. What is each workspace's runs for
        the workspaces served here (`placement`; `serve`); what is the fleet's, `once`."""
        return [
            Part("budgets", self._budgets, reconfigure=lambda _: self.runtime.held.recheck()),
            Part("metrics", reconfigure=self._count_workspaces),
            Part("sessions", run=self._sessions),
            Part("outbox", self.outbox.delivering, self.outbox.resuming),
            Part("progress views", run=self.presenter.running),
            Part("dispatch", self.followers.following, once=self.followers.running),
            Part("retention", once=self.retention.running),
            Part("pairing", once=self._pairing),
            Part("schedules", once=self.schedules.running, reconfigure=self._plan_again),
            Part("health", run=self.health.running),
        ]

    def health_of(self, workspace: WorkspaceConfig) -> list[HealthLine]:
        """The workspace's platform connections and MCP servers, in words, now."""

        def listens(platform: str) -> str:
            profile = self.platforms.profile(platform)
            return (profile.listens(workspace) if profile is not None else None) or "?"

        connections = self.metrics.connections.of(workspace.id)
        return health.live(self.runtime, connections, listens, workspace)

    def _health_everywhere(self) -> list[HealthLine]:
        """Every workspace's, as kept for `switchboard status`; with replicas, a platform's
        only where its bot runs or failed."""
        found = [h for w in self.config.workspaces for h in self.health_of(w)]
        if self.runtime.homes is None:
            return found
        return [h for h in found if h.ok or not h.words.endswith(health.NOT_HERE)]

    def _replica(self) -> str | None:
        return self.runtime.homes.holder if self.runtime.homes is not None else None

    async def serve(self, workspace_id: str) -> None:
        """Replicas: the workspace's platform side runs here from now on (this replica holds
        its lease; the bots are the process's). What its last holder left is read again
        first (its conversations' sessions, the progress it left shown, the conversations it
        found refused), then its work starts: nothing of it runs here before (`Placement`)."""
        await self.sessions.load(workspace_id)
        await self.presenter.sweep(workspace_id)
        await self.outbox.reload_failed(workspace_id)
        self.placement.serve(workspace_id)
        self.followers.serve(workspace_id)
        await self.outbox.serve(workspace_id)
        await self.downloads.serve(workspace_id)

    async def leave(self, workspace_id: str, *, graceful: bool = False) -> None:
        """Replicas: the workspace's platform side stops here (its lease let go, `graceful`,
        or lost); what was under way resumes where it is served next."""
        await self.followers.leave(workspace_id)
        await self.presenter.leave(workspace_id)
        await self.outbox.leave(workspace_id, graceful=graceful)
        await self.downloads.leave(workspace_id)

    @property
    def files(self) -> Part:
        """Messages held for their files, fetched through the platforms' bots: the process
        puts this part after them, so that it closes before they stop."""
        return Part("downloads", run=self.downloads.running)

    @property
    def config(self) -> SwitchboardConfig:
        """The config running now (a reload replaces it)."""
        return self.current()

    @property
    def secrets(self) -> Secrets:
        """Every secret the process knows (the runtime's set): masked wherever text leaves
        towards a person (chat, the console) or the store."""
        return self.runtime.store.secrets

    def attach(self, transport: Transport) -> None:
        self.platforms.attach(transport)

    def attach_files(self, source: FileSource) -> None:
        """Where files sent on `source.platform` are downloaded from (with its bot's keys)."""
        self.downloads.attach(source)

    async def start(self) -> None:
        """Without the App (tests, an embedding): every part opened, then run."""
        await self._alone.open_all([*self.parts, self.files])
        await self._alone.activate()
        await self._alone.lead()

    async def close(self) -> None:
        """What `start` opened, closed in reverse; pending intents resume on the next start."""
        await self._alone.close()

    # -- the lives of the parts that are not a service's own ---------------------------

    @contextlib.asynccontextmanager
    async def _budgets(self) -> AsyncIterator[None]:
        """Budgets, checked before each model call (bridge/spend/gate.py)."""
        gate = BudgetGate(self.current, self.runtime, self.store, self.router, self.schedules)
        self.runtime.limit_spend(gate)
        yield

    def _count_workspaces(self, change: Change) -> None:
        self.metrics.set_workspaces(w.id for w in change.after.workspaces)

    def _plan_again(self, change: Change) -> None:
        self.schedules.reload()

    @contextlib.asynccontextmanager
    async def _sessions(self) -> AsyncIterator[None]:
        await self.sessions.load()
        yield

    @contextlib.asynccontextmanager
    async def _pairing(self) -> AsyncIterator[None]:
        """Tells senders the answers given by the CLI, too."""
        self.pairing.start()
        yield
        await self.pairing.stop()

    async def receive(self, chat: InboundChat) -> Outcome:
        self.metrics.connections.event(chat.route.platform, chat.route.workspace_id)
        return await self.ingress.receive(chat)

    async def command(self, chat: InboundChat, *, invoked_as: str) -> str:
        """Run a command for only its sender to see (a Slack slash command); its answer."""
        self.metrics.connections.event(chat.route.platform, chat.route.workspace_id)
        answer = await self.ingress.command(chat, invoked_as=invoked_as)
        return self.secrets.mask(answer)  # it goes to chat without the outbox

    def budget(self, route: Route) -> ProgressBudget:
        """Room for a best-effort platform call (a reaction on receipt) within the platform's
        limits, shared with replies and progress: `take` it, or skip the call."""
        return self.platforms.budget(route)

    async def settle(self) -> None:
        """Until every turn has finished and every reply it produced has been sent."""
        while True:
            await self.downloads.idle()
            await self.runtime.wait_idle()
            await self.followers.caught_up(self.runtime.store.last_seq)
            await self.outbox.idle()
            if (
                not self.runtime.busy()
                and self.followers.handled_seq >= self.runtime.store.last_seq
            ):
                return
