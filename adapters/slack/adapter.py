"""One Slack workspace on slack-bolt: an `AsyncApp` whose `authorize` admits this workspace's
team only, fed what the doors stored (`POST /slack/events`, or Socket Mode: `socket.py`) by the
replay (`decode`).

Slack was answered when the door stored the request; a listener returns once the bridge has
handled the message (`process_before_response`), so the replay removes a request only then.
An operator's message first learns the names of its channel and sender (names.py): from
memory, or from Slack within `LOOKUP_TIMEOUT_S`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import aiohttp
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.intake.record import Put
from adapters.slack.files import SlackFiles
from adapters.slack.inbound import (
    BUTTONS,
    COMMAND_ACTION,
    BotIdentity,
    button_chat,
    command_chat,
    message_chat,
)
from adapters.slack.names import SlackNames
from adapters.slack.platform import SLACK
from adapters.slack.settings import SLACK_SECTION, SlackConfig
from adapters.slack.socket import SocketIntake
from adapters.slack.transport import SlackTransport
from bridge import cancel_and_wait, texts
from bridge.service import Bridge
from bridge.store.records import StoredRequest
from bridge.types import InboundChat
from bridge.verdicts import Outcome
from config.errors import ConfigError, PlatformUnreachable
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)

T = TypeVar("T")
SOCKET_LOST = (
    "its Socket Mode connection to Slack was lost (the network, or Slack closed it); it is "
    "being opened again"
)
STOP_WAIT_S = 2.0  # how long background work (reactions, slash command answers) gets at a stop
NOT_STARTED = (
    "slack.bot_token was not checked and this workspace's Slack did not start (Switchboard "
    "does not keep trying). Once this machine reaches Slack (check its network, a proxy, or "
    "slack.api_base_url), start Switchboard again (or, if it runs on, reload)."
)


SDK_LOGGER = "slack_sdk.web.async_base_client"  # the one slack_sdk's web client logs to


def leveled(name: str) -> logging.Logger:
    """The logger `name`, its own level set to the one it logs at, as bolt sets those of its
    parts from the root's: slack_sdk and bolt build their debug lines (each call's request and
    response, each middleware's name) whenever a logger's own level is unset, written or not
    (issue 45: a tenth of the CPU of each Slack call). Logging is set up before this runs."""
    logger = logging.getLogger(name)
    if logger.level == logging.NOTSET:
        logger.setLevel(logger.getEffectiveLevel())
    return logger


class SlackAdapter:
    def __init__(self, bridge: Bridge, workspace: WorkspaceConfig, put: Put) -> None:
        """`put` stores what comes in over Socket Mode."""
        settings = SLACK_SECTION.of(workspace)
        assert settings is not None
        self._bridge = bridge
        self._put = put
        self.workspace = workspace
        self.settings: SlackConfig = settings
        # One connection pool for every call to this workspace's Slack (slack_sdk would open a
        # new session, and a new connection, for each call otherwise). slack_sdk leaves the
        # time limit of a session it is given to that session.
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.settings.request_timeout_s)
        )
        self.client = self._client(self.settings.bot_token.get_secret_value())
        self.transport = SlackTransport(self.client, workspace.id)
        self.names = SlackNames(self.client, workspace.id)
        self.files = SlackFiles(
            self.client, self._session, self.settings.bot_token.get_secret_value()
        )
        self.app = AsyncApp(
            # Named here: left unnamed, Bolt names the app after its caller's file, which it
            # finds with inspect.stack(), reading the source of every frame (a tenth of a
            # second per workspace started).
            name=f"switchboard-{workspace.id}",
            client=self._client(None),
            request_verification_enabled=False,  # the doors checked every request
            authorize=self._authorizer(),
            process_before_response=True,
            logger=leveled(f"slack_bolt.{workspace.id}"),
        )
        self.app.event("message")(self._on_message)
        self.app.event("app_mention")(self._on_message)
        for action in BUTTONS:
            self.app.action(action)(self._on_button)
        self.app.action(COMMAND_ACTION)(self._on_button)
        self.app.command(self.settings.slash_command)(self._on_command)
        self.app.event("assistant_thread_started")(self._on_assistant_thread)
        self.identity: BotIdentity | None = None
        self._socket: SocketIntake | None = None
        self._background: set[asyncio.Task[Any]] = set()

    def _client(self, token: str | None) -> AsyncWebClient:
        # No retry handlers: the bridge decides about every retry, and a resend after a
        # dropped connection could post twice.
        return AsyncWebClient(
            token=token,
            base_url=self.settings.api_base_url,
            retry_handlers=[],
            session=self._session,
            logger=leveled(SDK_LOGGER),
        )

    @property
    def running(self) -> bool:
        return self.identity is not None

    async def decode(self, request: StoredRequest) -> None:
        """A request its door stored (or Socket Mode did), handed to bolt, whose listeners
        below hand its message to the bridge. The door checked it, so bolt does not check it
        again: it may have waited longer than bolt's five minutes for a signature."""
        headers: dict[str, str | Sequence[str]] = dict(request.headers)
        bolt = AsyncBoltRequest(body=request.body, query=request.query, headers=headers)
        response = await self.app.async_dispatch(bolt)
        if response.status >= 500:
            raise RuntimeError(f"slack request not handled ({response.status})")

    async def start(self, public_url: str | None = None) -> None:
        """Ask Slack whose the bot token is and connect. A token Slack refuses is a
        ConfigError; a Slack that cannot be reached (or answers 5xx or 429) is
        PlatformUnreachable: the token was not checked. Nothing tries again until a restart
        or reload."""
        url = self.settings.api_base_url
        workspace = f"workspace {self.workspace.id}"
        where = f"{workspace}: Slack at {url}"
        try:
            auth = await self.client.auth_test()
        except SlackApiError as exc:
            status, error = exc.response.status_code, exc.response.get("error")
            if status >= 500 or status == 429:
                reason = f"{status} {error or 'server error'}"
                raise PlatformUnreachable(
                    "Slack", url, reason, where=workspace, then=NOT_STARTED
                ) from None
            raise ConfigError(
                f"{where} refused the bot token ({error}). Check slack.bot_token and "
                "slack.api_base_url."
            ) from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            reason = str(exc) or type(exc).__name__
            raise PlatformUnreachable(
                "Slack", url, reason, where=workspace, then=NOT_STARTED
            ) from None
        team = str(auth.get("team_id"))
        if team != self.settings.team_id:
            raise ConfigError(
                f"{where}: the bot token belongs to team {team}, but slack.team_id is "
                f"{self.settings.team_id}. Put the token of that team, or fix slack.team_id."
            )
        self.identity = BotIdentity(team, str(auth["user_id"]), str(auth.get("bot_id") or ""))
        self.transport.bot_id = self.identity.bot_id
        if self.settings.app_token is not None:
            self._socket = SocketIntake(
                self.workspace.id,
                self.settings.app_token.get_secret_value(),
                self._client(None),
                self._put,
                self._socket_state,
            )
            # slack_sdk tries again forever (every 10 s) when the connection fails: a token
            # Slack refuses would hold a start, and a reload, for good.
            wait_s = 2 * self.settings.request_timeout_s
            try:
                async with asyncio.timeout(wait_s):
                    await self._socket.connect()
            except TimeoutError:
                raise ConfigError(
                    f"{where}: Socket Mode did not connect within {wait_s:g} s (the log says "
                    "why). Check slack.app_token."
                ) from None
        log.info(
            "slack workspace ready",
            extra={"workspace": self.workspace.id, "socket_mode": self._socket is not None},
        )

    def _socket_state(self, up: bool) -> None:
        """Socket Mode dropped, or is open again: `/status`, `switchboard status` and the
        console say so (`bridge/health.py`)."""
        metrics = self._bridge.metrics
        if up:
            metrics.platform_call_ok(SLACK.name, self.workspace.id)
        else:
            metrics.platform_call_failed(SLACK.name, self.workspace.id, SOCKET_LOST)
        metrics.connection(SLACK.name, self.workspace.id, up=up)

    async def stop(self) -> None:
        self.identity = None  # what is stored for it waits for the next start
        if self._socket is not None:
            await self._socket.close()
        if self._background:  # let reactions and answers under way finish, briefly
            _, late = await asyncio.wait(self._background, timeout=STOP_WAIT_S)
            await cancel_and_wait(*late)
        await self._session.close()

    def _authorizer(self) -> Callable[..., Awaitable[AuthorizeResult]]:
        # bolt reads the argument names of `authorize` (a bound method's `self` confuses it),
        # and answers "not installed here" when it returns None, which its hint leaves out.
        async def authorize(enterprise_id: str | None, team_id: str | None) -> Any:
            return self._authorize(enterprise_id, team_id)

        return authorize

    def _authorize(self, enterprise_id: str | None, team_id: str | None) -> AuthorizeResult | None:
        """Only this workspace's own team is served with this workspace's token."""
        if self.identity is None or team_id != self.settings.team_id:
            log.warning(
                "slack event for another team refused",
                extra={"workspace": self.workspace.id, "team": team_id},
            )
            return None
        return AuthorizeResult(
            enterprise_id=enterprise_id,
            team_id=team_id,
            bot_token=self.settings.bot_token.get_secret_value(),
            bot_id=self.identity.bot_id,
            bot_user_id=self.identity.user_id,
        )

    async def _on_message(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        if self.identity is None:
            return
        chat = message_chat(
            event,
            workspace_id=self.workspace.id,
            channels=self.settings.channels,
            bot=self.identity,
            event_id=body.get("event_id"),
        )
        if chat is None:
            return
        if await self._receive_named(chat) is Outcome.PROMPT:
            self._later(self.transport.received(chat.route))

    async def _receive_named(self, chat: InboundChat) -> Outcome:
        """The message, with its channel's and sender's names when an operator may have
        written it (a stranger's message is refused: no need to ask Slack who they are)."""
        if self._may_be_operator(chat):
            route = chat.route
            place, person = await self.names.of(
                route.conversation_id, chat.sender_id, direct=chat.is_direct
            )
            chat = replace(chat, conversation_name=place, sender_name=person)
        return await self._bridge.receive(chat)

    def _may_be_operator(self, chat: InboundChat) -> bool:
        """An operator of the file, or, in a DM where the workspace pairs, perhaps a paired
        one."""
        workspace = next(
            (w for w in self._bridge.config.workspaces if w.id == self.workspace.id),
            self.workspace,
        )
        if chat.is_direct and workspace.pairing.enabled:
            return True
        return any(SLACK_SECTION.user(o) == chat.sender_id for o in workspace.operators)

    async def _on_button(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        chat = button_chat(body, workspace_id=self.workspace.id)
        if chat is not None:
            await self._bridge.receive(chat)

    async def _on_command(
        self, ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond
    ) -> None:
        """A slash command: acknowledged at once (Slack waits 3 s at most, and a `stop` may
        take longer), answered through its `response_url` for its sender only."""
        await ack()
        chat = command_chat(command, workspace_id=self.workspace.id)
        if chat is not None:
            self._later(self._answer(chat, respond))

    async def _answer(self, chat: InboundChat, respond: AsyncRespond) -> None:
        try:
            answer = await self._bridge.command(chat, invoked_as=self.settings.slash_command)
        except Exception:
            log.exception("slash command failed", extra={"workspace": self.workspace.id})
            answer = texts.COMMAND_FAILED
        try:
            await respond(text=answer, response_type="ephemeral")
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning(
                "slash command answer not delivered",
                extra={"workspace": self.workspace.id, "error": str(exc)},
            )

    async def _on_assistant_thread(self, event: dict[str, Any]) -> None:
        """A new assistant thread with the app: offer the configured prompts."""
        thread = event.get("assistant_thread") or {}
        channel, ts = thread.get("channel_id"), thread.get("thread_ts")
        prompts = [p.model_dump() for p in self.settings.suggested_prompts]
        if isinstance(channel, str) and isinstance(ts, str) and prompts:
            self._later(self.transport.suggest_prompts(channel, ts, prompts))

    def _later(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Work that must not hold up the ack, kept until done and stopped with the adapter."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error(
                "slack background work failed",
                exc_info=task.exception(),
                extra={"workspace": self.workspace.id},
            )
