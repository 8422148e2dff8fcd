"""Part 4: our intake against the bare slack-bolt and python-telegram-bot servers (one insert)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hmac
import json
import signal
import sqlite3
import statistics
import sys
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from bench import slack_bench
from bench.loopback import serve
from bench.replicas.processes import (
    ALICE,
    BARE_BANNER,
    Replica,
    made,
)
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram

# -- 4. the bare libraries ---------------------------------------------------------------

TELEGRAM_SECRET = "s3cret"


async def durable_table(path: Path) -> Any:
    """An aiosqlite connection set up as Switchboard sets up its own (WAL, synchronous
    NORMAL), with one table to insert into."""
    import aiosqlite

    db = await aiosqlite.connect(path)
    await db.execute("PRAGMA journal_mode=WAL")
    await db.execute("PRAGMA synchronous=NORMAL")
    await db.execute(
        "CREATE TABLE IF NOT EXISTS messages"
        " (id INTEGER PRIMARY KEY, source TEXT, who TEXT, words TEXT)"
    )
    await db.commit()
    return db


def bolt_server(db: Any) -> web.Application:
    """slack-bolt's own aiohttp server (`AsyncApp.web_app`): the request verified and
    dispatched by bolt, its message listener doing one durable insert before the 200."""
    from slack_bolt.async_app import AsyncApp
    from slack_bolt.authorization import AuthorizeResult

    async def authorize(enterprise_id: str | None, team_id: str | None) -> AuthorizeResult:
        return AuthorizeResult(
            enterprise_id=enterprise_id,
            team_id=team_id,
            bot_token="xoxb-test-t1",
            bot_id="BBOTT1",
            bot_user_id="UBOTT1",
        )

    app = AsyncApp(
        signing_secret=slack_bench.SECRET, authorize=authorize, process_before_response=True
    )

    @app.event("message")
    async def store(event: dict[str, Any]) -> None:
        await db.execute(
            "INSERT INTO messages (source, who, words) VALUES (?, ?, ?)",
            (event["channel"], event["user"], event["text"]),
        )
        await db.commit()

    return app.web_app(path="/slack/events")


async def ptb_server(db: Any, api: str) -> tuple[web.Application, Any]:
    """python-telegram-bot's webhook handling: the secret token checked, the update parsed
    and handed to `Application.process_update`, whose handler does one durable insert before
    the 200."""
    from telegram import Update
    from telegram.ext import Application, ContextTypes, MessageHandler, filters

    token = FakeTelegram.token
    application = Application.builder().token(token).base_url(api).updater(None).build()

    async def store(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        assert message is not None and message.from_user is not None
        await db.execute(
            "INSERT INTO messages (source, who, words) VALUES (?, ?, ?)",
            (str(message.chat_id), str(message.from_user.id), message.text),
        )
        await db.commit()

    application.add_handler(MessageHandler(filters.UpdateType.MESSAGE, store))
    await application.initialize()  # getMe, from the fake
    await application.start()

    async def webhook(request: web.Request) -> web.Response:
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "").encode()
        if not hmac.compare_digest(given, TELEGRAM_SECRET.encode()):
            raise web.HTTPForbidden(text="wrong secret token")
        await application.process_update(Update.de_json(await request.json(), application.bot))
        return web.Response(text="ok")

    routes = web.Application()
    routes.router.add_post("/telegram/{workspace}", webhook)
    return routes, application


async def serve_bare(kind: str, db_path: Path, api: str) -> None:
    """A bare library's server in this process, until SIGTERM (`--serve-bare`)."""
    db = await durable_table(db_path)
    application = None
    if kind == "slack":
        routes = bolt_server(db)
    else:
        routes, application = await ptb_server(db, api)
    runner = web.AppRunner(routes, access_log=None)  # as Switchboard's server
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    gc.freeze()  # as `switchboard run` does once started
    print(f"bare server on 127.0.0.1:{runner.addresses[0][1]}.", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await runner.cleanup()
    if application is not None:
        await application.stop()
        await application.shutdown()
    await db.close()


def telegram_updates(count: int, first: int) -> list[tuple[bytes, dict[str, str]]]:
    """Updates as telegram_bench sends them (a forum group, 50 topics), new topics for each
    run so that no session's queue fills up across runs."""
    headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": "s3cret"}
    updates = []
    for i in range(first, first + count):
        update = {
            "update_id": 10_000 + i,
            "message": {
                "message_id": i + 1,
                "date": 0,
                "text": f"message {i}",
                "message_thread_id": (i // count) * 50 + i % 50 + 1,
                "is_topic_message": True,
                "chat": {"id": -100, "type": "supergroup", "is_forum": True},
                "from": {"id": 1001, "is_bot": False, "first_name": "Alice"},
            },
        }
        updates.append((json.dumps(update).encode(), headers))
    return updates


async def closed_loop(
    http: aiohttp.ClientSession,
    url: str,
    requests: list[tuple[bytes, dict[str, str]]],
    clients: int,
) -> float:
    """Seconds to have every request answered 200, `clients` at a time."""
    queue = iter(requests)

    async def client() -> None:
        for body, headers in queue:
            async with http.post(url, data=body, headers=headers) as response:
                assert response.status == 200, (response.status, await response.text())

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return time.perf_counter() - start


async def never_answers() -> tuple[asyncio.Server, str]:
    """A model API that takes requests and never answers (Switchboard's turns wait on it, as
    slack_bench's HeldProvider does): only intake is measured."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        while await reader.read(65536):
            pass

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


@dataclass
class Intake:
    rates: list[float] = field(default_factory=list)  # requests/s, one a run
    cpu_ms: list[float] = field(default_factory=list)  # the server's CPU per request

    @property
    def rate(self) -> float:
        return statistics.median(self.rates)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_ms)


async def overhead(
    where: Path, count: int, runs: int, clients: int
) -> dict[str, tuple[Intake, Intake]]:
    """Each server in its own process, the clients and fakes in this one; runs alternate
    between the bare library and Switchboard. By platform: (bare, Switchboard)."""
    made(where)
    slack, telegram = FakeSlack(), FakeTelegram()
    team = slack.add_team("T1")
    runners = [await serve(slack.app()), await serve(telegram.app())]
    slack.url, telegram.url = runners[0][1], runners[1][1]
    model, model_url = await never_answers()
    alice = {"id": "alice", "primary": True, "slack_user_id": ALICE, "telegram_user_id": 1001}
    slack_config = write_config(
        made(where / "sb-slack") / "switchboard.toml",
        db=where / "sb-slack" / "sb.db",
        provider=anthropic(model_url),
        workspaces=[
            workspace(
                "acme",
                [alice],
                slack={
                    "team_id": "T1",
                    "bot_token": team.token,
                    "signing_secret": slack_bench.SECRET,
                    "api_base_url": slack.base_url,
                    "channels": ["COPS"],
                },
            )
        ],
    )
    telegram_config = write_config(
        made(where / "sb-telegram") / "switchboard.toml",
        db=where / "sb-telegram" / "sb.db",
        provider=anthropic(model_url),
        workspaces=[
            workspace(
                "acme",
                [alice],
                telegram={
                    "bot_token": telegram.token,
                    "api_base_url": telegram.base_url,
                    "mode": "webhook",
                    "webhook_secret": TELEGRAM_SECRET,
                    "chats": [-100],
                },
            )
        ],
    )

    def bare(kind: str) -> Awaitable[Replica]:
        argv = [
            sys.executable, "-m", "bench.replicas_bench", "--serve-bare", kind,
            "--bare-db", str(where / f"bare-{kind}.db"), "--telegram-api", telegram.base_url,
        ]  # fmt: skip
        return Replica.spawn(f"bare-{kind}", argv, where / f"bare-{kind}.out", BARE_BANNER)

    servers = await asyncio.gather(
        bare("slack"),
        Replica.start(slack_config, "sb-slack"),
        bare("telegram"),
        Replica.start(telegram_config, "sb-telegram"),
    )
    results = {"slack": (Intake(), Intake()), "telegram": (Intake(), Intake())}
    try:
        async with aiohttp.ClientSession() as http:
            for run in range(runs):
                for platform, pair in results.items():
                    pick = servers[:2] if platform == "slack" else servers[2:]
                    for server, intake in zip(pick, pair, strict=True):
                        first = (run + 1) * 100_000 + (0 if server is pick[0] else 50_000)
                        if platform == "slack":
                            requests = slack_bench._requests(slack, count, first)
                            url = f"{server.url}/slack/events"
                        else:
                            requests = telegram_updates(count, first)
                            url = f"{server.url}/telegram/acme"
                        cpu0 = server.cpu()
                        seconds = await closed_loop(http, url, requests, clients)
                        intake.rates.append(count / seconds)
                        intake.cpu_ms.append(1000 * (server.cpu() - cpu0) / count)
    finally:
        await asyncio.gather(*(s.stop() for s in servers))
        model.close()
        for runner, _ in runners:
            await runner.cleanup()
    for kind in ("slack", "telegram"):
        stored = rows(where / f"bare-{kind}.db")
        assert stored == count * runs, (kind, stored)
        stored = rows(where / f"sb-{kind}" / "sb.db")
        assert stored == count * runs, (f"Switchboard {kind}", stored)
    return results


def rows(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return int(db.execute("SELECT count(*) FROM messages").fetchone()[0])
