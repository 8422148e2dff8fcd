"""A Telegram workspace whose agent's first provider (Anthropic's API, `default`) answers its
first turn, then is rate limited for ten minutes (429, Retry-After: 600): the next turn is
answered by the fallback, an OpenAI-compatible server (`backup`), and the session stays
there. What /status, /metrics and the console say of it is tested from here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapters.server.app import App
from bridge import texts
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes import openai_api
from tests.fakes.anthropic_api import FakeAnthropic, Reply, error, text
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

ALICE = 1001
PRIMARY = "default:claude-test-model"
BACKUP = "backup:gpt-4.1-mini"
TIMEZONE = "Asia/Tokyo"
ADMIN_TOKEN = "acme-lead-token-for-fallback-0001"
RATE_LIMITED_FOR_S = 600
FIRST, SECOND = "From the first.", "From the backup."


class Primary:
    """Answers until `limited`; then a 429 asking for ten minutes' rest (or refuses its key)."""

    def __init__(self) -> None:
        self.limited = False
        self.message = "Number of requests exceeded"  # what its 429 says
        self.refuses_key = False  # a 401 instead

    def __call__(self, body: dict[str, Any]) -> Reply:
        if self.limited and self.refuses_key:
            return error(401, "authentication_error", "invalid x-api-key")
        if self.limited:
            headers = {"retry-after": str(RATE_LIMITED_FOR_S)}
            return error(429, "rate_limit_error", self.message, **headers)
        return text(FIRST)


@dataclass
class Scene:
    app: App
    telegram: FakeTelegram
    primary: Primary

    def said(self) -> list[str]:
        return [m["text"] for m in replies(self.telegram, ALICE)]

    async def ask(self, words: str) -> str:
        """Alice's message in her DM; the agent's answer."""
        before = len(self.answers())
        self.telegram.push_message(words, user=ALICE)
        await until(lambda: len(self.answers()) > before, 30)
        return self.answers()[before]

    def answers(self) -> list[str]:
        """What the agent said to Alice, without Switchboard's own notices to her (she is
        the primary operator: a refused key is told to her too)."""
        notice = texts.PROVIDER_REFUSED.partition("{")[0]
        return [said for said in self.said() if not said.startswith(notice)]


def backup_api() -> FakeOpenAI:
    """The fallback's server, to be served on loopback (its `url` set) by the caller."""
    backup = FakeOpenAI()
    backup.responder = lambda body: openai_api.text(SECOND)
    return backup


async def start_scene(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    aiohttp_server: Any = None,
    *,
    backup: FakeOpenAI | None = None,
) -> Scene:
    """Started with the first provider up: nothing has fallen back yet. The fallback is
    `backup` (served), else one served by `aiohttp_server`."""
    if backup is None:
        backup = backup_api()
        server = await aiohttp_server(backup.app(), host="127.0.0.1")
        backup.url = str(server.make_url("/v1"))
    primary = Primary()
    anthropic_api.responder = primary
    app = await start_app(
        topology.folder / "unused.db",
        anthropic_api,
        telegram_api,
        topology=topology,
        acme_extra={
            "timezone": TIMEZONE,
            "admins": [{"id": "lead", "token": ADMIN_TOKEN}],
        },
        provider={
            "fallback": ["backup"],
            "prices": {
                "claude-test-model": {"input": 3.0, "output": 15.0},
                "gpt-4.1-mini": {"input": 0.4, "output": 1.6},
            },
        },
        providers={
            "backup": {
                "kind": "openai",
                "base_url": backup.url,
                "api_key": "test-key",
                "model": "gpt-4.1-mini",
            }
        },
    )
    return Scene(app, telegram_api, primary)


async def fall_back(scene: Scene) -> None:
    """A first turn on the first provider, then its 429: the second turn on the backup."""
    assert await scene.ask("Hello?") == FIRST
    scene.primary.limited = True
    assert await scene.ask("Still there?") == SECOND
