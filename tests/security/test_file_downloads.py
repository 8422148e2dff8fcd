"""A file an operator sends is fetched only from where the platform serves files, with the bot's
credentials going nowhere else:

- Slack: the bot token goes only to a URL of an allowed origin (scheme, host and port: Slack's
  file hosts over https on 443, or the configured `api_base_url`'s own origin, as the loopback
  fake serves files), and never follows a redirect. A second loopback server stands for
  whatever else a `url_private_download` could name; it must never see the token.
- Telegram: a `getFile` `file_path` is fetched over HTTP below the bot's file URL, never read
  from this machine's disk (python-telegram-bot reads a `file_path` that names a local file):
  a marker written to a local file never reaches the model.

Each refused file is named to the operator, as other refused files are."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult
from pytest_aiohttp import AiohttpServer
from slack_sdk.web.async_client import AsyncWebClient

from adapters.server.app import App
from adapters.slack.files import SlackFiles
from bridge.attachments.source import FetchError
from bridge.types import FileKind, InboundFile
from tests.adapters.slack_harness import ALICE, SlackSide
from tests.adapters.slack_harness import start_app as start_slack
from tests.adapters.telegram_harness import replies
from tests.adapters.telegram_harness import start_app as start_telegram
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.files_samples import png
from tests.runtime.helpers import until
from tests.topology import Topology

MARKER = "MARKER-from-this-machines-disk-7f3a"


@dataclass
class Elsewhere:
    """A loopback HTTP server that is not the platform: it records each request's path and
    Authorization header and answers with a picture, as a file host would."""

    url: str = ""
    seen: list[tuple[str, str | None]] = field(default_factory=list)

    async def serve(self, request: web.Request) -> web.Response:
        self.seen.append((request.path, request.headers.get("Authorization")))
        return web.Response(body=png(), content_type="image/png")

    def tokens(self) -> list[str]:
        return [auth for _, auth in self.seen if auth]


@pytest.fixture
async def elsewhere(aiohttp_server: Callable[..., Awaitable[AiohttpServer]]) -> Elsewhere:
    server = Elsewhere()
    app = web.Application()
    app.router.add_get("/{tail:.*}", server.serve)
    started = await aiohttp_server(app, host="127.0.0.1")
    server.url = str(started.make_url("")).rstrip("/")
    return server


# Slack


@pytest.fixture
async def slack_app(
    topology: Topology, db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    """Files come through the public port: on each topology (tests/topology.py)."""
    yield await start_slack(db_path, anthropic_api, slack_api, topology=topology)
    await topology.stop()  # while the fakes still answer


@pytest.fixture
def slack(slack_app: App, slack_api: FakeSlack) -> SlackSide:
    return SlackSide(slack_app, slack_api)


def other_port(fake: FakeSlack, elsewhere: Elsewhere, path: str) -> str:
    return f"{elsewhere.url}{path}"  # the fake's host, 127.0.0.1, on another port


def other_host(fake: FakeSlack, elsewhere: Elsewhere, path: str) -> str:
    return f"{elsewhere.url.replace('127.0.0.1', 'localhost')}{path}"


def other_scheme(fake: FakeSlack, elsewhere: Elsewhere, path: str) -> str:
    return f"{fake.url.replace('http://', 'https://')}{path}"  # the fake's host and port


@pytest.mark.parametrize("where", [other_port, other_host, other_scheme])
async def test_slack_never_sends_the_token_outside_the_allowed_origin(
    slack_app: App,
    slack: SlackSide,
    slack_api: FakeSlack,
    anthropic_api: FakeAnthropic,
    elsewhere: Elsewhere,
    where: Callable[[FakeSlack, Elsewhere, str], str],
) -> None:
    anthropic_api.script = [text("No picture came.")]
    shared = slack_api.files.add("T1", ALICE, "shot.png", "image/png", png())
    path = shared["url_private_download"].removeprefix(slack_api.url)
    url = where(slack_api, elsewhere, path)
    shared |= {"url_private_download": url, "url_private": url}
    await slack.say("what is this?", subtype="file_share", files=[shared], upload=False)
    await until(lambda: bool(anthropic_api.requests))
    assert elsewhere.tokens() == [], "the bot token left the allowed origin"
    assert elsewhere.seen == [] and slack_api.files.downloads == [], "nothing was asked for"
    assert "image" not in [b["type"] for b in anthropic_api.requests[0]["messages"][0]["content"]]
    await until(lambda: _notice(slack_api) is not None)
    assert _notice(slack_api) == (
        "Not passed to the agent: shot.png (it could not be downloaded: it is served from "
        f"{_origin(url)}, not from the configured Slack ({slack_api.url}))."
    )


async def test_slack_never_follows_a_redirect_with_the_token(
    slack_app: App,
    slack: SlackSide,
    slack_api: FakeSlack,
    anthropic_api: FakeAnthropic,
    elsewhere: Elsewhere,
) -> None:
    anthropic_api.script = [text("No picture came.")]
    shared = slack_api.files.add("T1", ALICE, "shot.png", "image/png", png())
    slack_api.files.moved[shared["id"]] = f"{elsewhere.url}/stolen/shot.png"
    await slack.say("what is this?", subtype="file_share", files=[shared], upload=False)
    await until(lambda: _notice(slack_api) is not None)
    assert str(_notice(slack_api)).startswith(
        "Not passed to the agent: shot.png (it could not be downloaded: "
    )
    [asked] = slack_api.files.downloads
    assert asked.team == "T1", "the allowed origin was asked, with the token"
    assert elsewhere.seen == [], "the redirect was not followed"


class SlackFilesOnLoopback(AbstractResolver):
    """Resolves every name (Slack's file host among them) to the loopback server on `port`."""

    def __init__(self, port: int) -> None:
        self.port = port

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(
                hostname=host,
                host="127.0.0.1",
                port=self.port,
                family=socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        pass


@pytest.mark.parametrize(
    "url",
    [
        "http://files.slack.com/files-pri/T1-F1/download/shot.png",  # plain http, port 80
        "http://files.slack.com:443/files-pri/T1-F1/download/shot.png",  # http on https's port
    ],
)
async def test_slack_sends_the_token_to_its_file_host_over_https_only(
    elsewhere: Elsewhere, url: str
) -> None:
    """With Slack's own API configured, a file URL on Slack's file host but over plain http
    is refused before any connection. Slack's host is made to resolve to the loopback
    server, which would otherwise take the token in clear (no public port: no App here)."""
    token = "xoxb-test-never-in-clear"
    port = int(elsewhere.url.rsplit(":", 1)[1])  # the loopback server's
    connector = aiohttp.TCPConnector(resolver=SlackFilesOnLoopback(port))
    async with aiohttp.ClientSession(connector=connector) as session:
        client = AsyncWebClient(token=token, base_url="https://slack.com/api/", session=session)
        files = SlackFiles(client, session, token)
        shared = InboundFile("F1", FileKind.DOCUMENT, name="shot.png", url=url)
        with pytest.raises(FetchError) as refused:
            await files.fetch("acme", shared, 1_000_000)
    assert not refused.value.retryable
    assert "not from the configured Slack (https://*.slack.com)" in str(refused.value)
    assert elsewhere.seen == []


def _notice(fake: FakeSlack) -> str | None:
    said = [p["text"] for p in fake.posts("DALICE") if p["text"].startswith("Not passed")]
    return said[0] if said else None


def _origin(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


# Telegram


@pytest.fixture
async def telegram_app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    """The bot polls (in-process): no public port."""
    app = await start_telegram(db_path, anthropic_api, telegram_api)
    yield app
    await app.stop()


def absolute(local: Path) -> str:
    return str(local)


def climbing(local: Path) -> str:
    return os.path.relpath(local)  # `../..` up from this process's working directory


@pytest.mark.parametrize("file_path", [absolute, climbing])
async def test_telegram_never_reads_a_file_path_from_this_machines_disk(
    telegram_app: App,
    telegram_api: FakeTelegram,
    anthropic_api: FakeAnthropic,
    tmp_path: Path,
    file_path: Callable[[Path], str],
) -> None:
    anthropic_api.script = [text("Nothing to read.")]
    local = tmp_path / "notes.txt"
    local.write_text(f"{MARKER}\n")
    named = file_path(local)
    assert named.startswith(("/", "../"))
    notes: dict[str, Any] = {
        **telegram_api.files.add(b"served by Telegram\n", "documents", "txt", path=named),
        "file_name": "notes.txt",
        "mime_type": "text/plain",
    }
    message: dict[str, Any] = {"document": notes, "caption": "read this"}
    telegram_api.push_message(None, user=1001, **message)
    await until(lambda: bool(anthropic_api.requests))
    assert MARKER not in str(anthropic_api.requests), "a local file reached the model"
    await until(lambda: len(replies(telegram_api, 1001)) == 2)
    said = [m["text"] for m in replies(telegram_api, 1001)]
    assert (
        "Not passed to the agent: notes.txt (it could not be downloaded: Telegram named a "
        "path that is not a plain relative path on its file server)." in said
    )
    assert telegram_api.files.downloads == [], "nothing was fetched, from disk or the server"
    assert telegram_api.refused == []
