"""A third platform, registered from outside: its door, its bots, its profile, and nothing in
the bridge, the server or the doors changed for it (issue 30). It is served end to end, as
Slack and Telegram are: a request checked at its door and stored before it is answered, handed
on by the one replayer to its bot, trust and sessions from its profile, the agent's answer
sent through its transport in its own markup."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Hashable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from adapters import platforms
from adapters.bots import PlatformKind
from adapters.intake.door import DoorKind, Poll, Store
from adapters.intake.record import Arrival, Put
from adapters.platform import Platform
from adapters.server.app import App
from bridge import Bridge, InboundChat, PlatformProfile, Route, TransportLimits
from bridge.store import StoredRequest
from config import load
from config.schema import OperatorConfig, SwitchboardConfig, WorkspaceConfig
from runtime import MessageKind
from tests.bridge.fakes import RecordingTransport
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.runtime.helpers import until
from tests.topology import drained

TOKEN = "toy-door-token"


@dataclass(frozen=True)
class ToyProfile:
    """Nicknames are `@<operator id>`, `#ops` the one channel allowed, text is shouted."""

    name: str = "toy"
    limits: TransportLimits = field(default=TransportLimits(max_chars=400))

    def render(self, markdown: str) -> str:
        return markdown.upper()

    def serves(self, workspace: WorkspaceConfig) -> bool:
        return workspace.id == "acme"

    def operator_id(self, workspace: WorkspaceConfig, operator: OperatorConfig) -> str | None:
        return f"@{operator.id}"

    def allows(self, workspace: WorkspaceConfig, conversation_id: str) -> bool:
        return conversation_id == "#ops"

    def direct_conversation(
        self, workspace: WorkspaceConfig, operator: OperatorConfig
    ) -> str | None:
        return f"@{operator.id}"

    def paired_operator(self, operator_id: str, user_id: str) -> OperatorConfig:
        return OperatorConfig(id=user_id.removeprefix("@"))

    def listens(self, workspace: WorkspaceConfig) -> str | None:
        return "webhook"


class ToyTransport(RecordingTransport):
    @property
    def profile(self) -> PlatformProfile:
        return ToyProfile()


def door_keys(config: SwitchboardConfig) -> Any:
    return {w.id: TOKEN for w in config.workspaces if ToyProfile().serves(w)} or None


class ToyDoor:
    """`POST /toy/{workspace}` with the workspace's token in `X-Toy-Token`."""

    def __init__(self, put: Put, failed: Any) -> None:
        self._tokens: dict[str, str] = {}

    def update(self, keys: Any) -> None:
        self._tokens = dict(keys or {})

    def route(self, app: web.Application, store: Store) -> None:
        app.router.add_post("/toy/{workspace}", partial(self._line, store))

    def pollers(self) -> Mapping[Hashable, Poll]:
        return {}

    async def _line(self, store: Store, request: web.Request) -> web.Response:
        workspace = request.match_info["workspace"]
        if request.headers.get("X-Toy-Token") != self._tokens.get(workspace):
            raise web.HTTPForbidden(text="wrong token")
        line = await request.json()
        body = json.dumps(line)
        await store(Arrival("toy", workspace, line["where"], str(line["n"]), body, "toy token"))
        return web.Response(text="stored")


class ToyBot:
    def __init__(self, bridge: Bridge, workspace: WorkspaceConfig, put: Put) -> None:
        self._bridge = bridge
        self._workspace = workspace
        self.transport = ToyTransport()
        self.files = None
        self.running = False

    async def start(self, public_url: str | None) -> None:
        self.running = True

    async def stop(self) -> None:
        self.running = False

    async def decode(self, request: StoredRequest) -> None:
        line = json.loads(request.body)
        chat = InboundChat(
            route=Route(
                platform="toy", workspace_id=self._workspace.id, conversation_id=line["where"]
            ),
            sender_id=line["from"],
            dedupe_keys=(f"line:{line['n']}",),
            text=line["text"],
            is_direct=line["where"].startswith("@"),
        )
        await self._bridge.receive(chat)


@pytest.fixture
async def app(
    tmp_path: Path, anthropic_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[App]:
    kind = PlatformKind(ToyProfile(), ToyBot, None)
    toy = Platform("toy", DoorKind("toy", door_keys, ToyDoor), lambda: kind)
    monkeypatch.setitem(platforms._PLATFORMS, "toy", toy)
    path = write_config(
        tmp_path / "switchboard.toml",
        db=tmp_path / "sb.db",
        # The config knows its own platforms only; the toy needs none of its sections.
        workspaces=[workspace("acme", [{"id": "alice", "primary": True}], console="alice")],
        provider=anthropic(anthropic_api.url),
    )
    app = App(load(path), stdin=io.StringIO(), stdout=io.StringIO(), path=path)
    await app.start()
    yield app
    await app.stop()


async def test_a_platform_registered_from_outside_is_served_end_to_end(
    app: App, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("hello from the agent")]
    bot = app.live.bots("toy")["acme"]
    assert isinstance(bot, ToyBot)
    url = f"http://127.0.0.1:{app.port}/toy/acme"
    hi = {"n": 1, "from": "@alice", "where": "@alice", "text": "hi"}
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json=hi, headers={"X-Toy-Token": "guess"}) as answer:
            assert answer.status == 403, "its door checks before anything is stored"
        for _ in range(2):  # the platform's retry is taken once
            async with http.post(url, json=hi, headers={"X-Toy-Token": TOKEN}) as answer:
                assert answer.status == 200 and await answer.text() == "stored"
        stranger = {"n": 2, "from": "@mallory", "where": "@mallory", "text": "let me in"}
        async with http.post(url, json=stranger, headers={"X-Toy-Token": TOKEN}) as answer:
            assert answer.status == 200
    await until(lambda: any(s.route.conversation_id == "@alice" for s in bot.transport.sent))
    await drained(app)
    await app.bridge.settle()
    to_alice = [s.text for s in bot.transport.sent if s.route.conversation_id == "@alice"]
    assert to_alice == ["HELLO FROM THE AGENT"], "its markup, through its transport"
    to_mallory = [s.text for s in bot.transport.sent if s.route.conversation_id == "@mallory"]
    assert len(to_mallory) == 1 and "not an operator" in to_mallory[0].lower()
    prompts = [
        m.message.text
        for m in await app.runtime.store.messages()
        if m.message.kind is MessageKind.OPERATOR_PROMPT
    ]
    assert prompts == ["hi"]
