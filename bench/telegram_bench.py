"""Telegram webhook intake: updates per second from the HTTP request to a durably stored
message (the 200 goes back only after the store commits). Loopback only: a fake Bot API
answers the bot's own calls, and the model never answers, so only intake is measured."""

from __future__ import annotations

import asyncio
import io
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from adapters.server.app import App
from bench.loopback import handed_on, serve
from bench.runtime_bench import HeldProvider
from config import SwitchboardConfig, load
from tests.config_file import workspace, write_config
from tests.fakes.telegram_api import FakeTelegram


def _config(tmp: str, fake: FakeTelegram, db: str, mode: str) -> SwitchboardConfig:
    bot = {
        "bot_token": fake.token,
        "api_base_url": fake.base_url,
        "mode": mode,
        "webhook_secret": "s3cret",
        "chats": [-100],
    }
    alice = {"id": "alice", "primary": True, "telegram_user_id": 1001}
    acme = workspace("acme", [alice], telegram=bot)
    return load(write_config(Path(tmp) / "c.toml", db=Path(tmp) / db, workspaces=[acme]))


async def webhook_intake(updates: int = 2000, concurrency: int = 16) -> float:
    fake = FakeTelegram()
    runner, fake.url = await serve(fake.app())
    with tempfile.TemporaryDirectory() as tmp:
        config = _config(tmp, fake, "b.db", "webhook")
        app = App(config, stdin=io.StringIO(), stdout=io.StringIO(), provider=HeldProvider())
        await app.start()
        url = f"http://127.0.0.1:{app.port}/telegram/acme"
        headers = {"X-Telegram-Bot-Api-Secret-Token": "s3cret"}
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(updates):
            queue.put_nowait(i)

        async def client(http: aiohttp.ClientSession) -> None:
            while not queue.empty():
                i = queue.get_nowait()
                update = {
                    "update_id": 10_000 + i,
                    "message": {
                        "message_id": i + 1,
                        "date": 0,
                        "text": f"message {i}",
                        "message_thread_id": i % 50 + 1,
                        "is_topic_message": True,
                        "chat": {"id": -100, "type": "supergroup", "is_forum": True},
                        "from": {"id": 1001, "is_bot": False, "first_name": "Alice"},
                    },
                }
                async with http.post(url, json=update, headers=headers) as response:
                    assert response.status == 200, await response.text()

        start = time.perf_counter()
        async with aiohttp.ClientSession() as http:
            await asyncio.gather(*(client(http) for _ in range(concurrency)))
        await handed_on(app, updates)  # acknowledged once in the intake; counted once in turns
        elapsed = time.perf_counter() - start
        await app.stop()
    await runner.cleanup()
    return updates / elapsed


@dataclass
class Delivered:
    messages: int
    per_second: float  # from the intents' commit until the outbox is idle
    sustained: float  # arrivals at the fake a second, first to last (no burst: the spread)
    answered_429: int


async def paced_delivery(chats: int = 40, per_chat: int = 3) -> Delivered:
    """Messages to many chats through the real outbox and bot, against a fake that answers
    429 whenever Telegram's limits (1/s per chat, 30/s overall) are broken."""
    from adapters.telegram.platform import TELEGRAM
    from bridge.types import DeliveryKind, Route

    fake = FakeTelegram(per_chat_interval_s=1.0, global_per_second=30)
    runner, fake.url = await serve(fake.app())
    with tempfile.TemporaryDirectory() as tmp:
        config = _config(tmp, fake, "d.db", "polling")
        app = App(config, stdin=io.StringIO(), stdout=io.StringIO(), provider=HeldProvider())
        await app.start()
        outbox = app.bridge.outbox
        start = time.perf_counter()
        async with app.bridge.store.write() as tx:
            for n in range(per_chat):
                for chat in range(chats):
                    route = Route(
                        platform=TELEGRAM.name,
                        workspace_id="acme",
                        conversation_id=str(2000 + chat),
                    )
                    tx.enqueue(
                        f"bench-{chat}-{n}",
                        route,
                        DeliveryKind.NOTIFICATION,
                        f"message {n} to chat {chat}",
                    )
        await outbox.idle()
        elapsed = time.perf_counter() - start
        sent = len(fake.sent())
        arrived = sorted(c.at for c in fake.calls if c.method == "sendMessage")
        await app.stop()
    await runner.cleanup()
    assert sent == chats * per_chat, sent
    sustained = (len(arrived) - 1) / (arrived[-1] - arrived[0])
    return Delivered(sent, sent / elapsed, sustained, fake.too_many)


DELIVERIES = ((40, 3), (40, 10), (200, 3), (500, 2))  # (chats, messages to each)


async def main() -> None:
    rate = await webhook_intake()
    print("| benchmark | result | target |")
    print("|---|---|---|")
    print(
        f"| Telegram webhook updates taken to durable enqueue (2,000 updates, 16 clients, "
        f"50 forum topics) | {rate:,.0f} updates/s | >= 500/s |"
    )
    for chats, each in DELIVERIES:
        got = await paced_delivery(chats, each)
        print(
            f"| delivery to {chats} chats x {each} messages against enforced limits (1/s per "
            f"chat, 30/s overall) | {got.per_second:.1f} messages/s enqueue to idle, "
            f"{got.sustained:.1f}/s arriving; {got.answered_429} answered 429 | >= 28.5/s, "
            "no 429 |"
        )


if __name__ == "__main__":
    asyncio.run(main())
