"""Only a direct message may ask to pair. A stranger's press on one of the bot's buttons, in a
group or in a DM, is refused and recorded like any stranger's message, and never opens a pairing
request: no code is posted anywhere and the primary operator is asked nothing. A stranger's DM
text still gets its code."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import aiohttp

from tests.adapters.cli_process import run_to_end
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

SECRET = "s3cret"
ALICE, STRANGER = 1001, 666
EVE = {"id": STRANGER, "is_bot": False, "first_name": "Eve"}
GROUP = {"id": -100, "type": "supergroup", "title": "ops"}
EVES_DM = {"id": STRANGER, "type": "private"}
CODE = re.compile(r"pairing code (is )?[A-Z2-9]{8}")


def press(update_id: int, chat: dict[str, Any], data: str) -> dict[str, Any]:
    """Eve presses the button `data` on one of the bot's messages in `chat`."""
    bots = {"id": 123456, "is_bot": True, "first_name": "Switchboard"}
    message = {"message_id": 50, "date": int(time.time()), "chat": chat, "from": bots, "text": "x"}
    query = {"id": f"cb{update_id}", "chat_instance": "ci", "data": data, "from": EVE}
    return {"update_id": update_id, "callback_query": query | {"message": message}}


def eves_dm(update_id: int, words: str) -> dict[str, Any]:
    message = {"message_id": update_id, "date": int(time.time()), "chat": EVES_DM, "from": EVE}
    return {"update_id": update_id, "message": message | {"text": words}}


async def refused(topology: Topology, count: int, wait_s: float = 10.0) -> None:
    """Until Eve has been refused `count` times, as the ledger records it."""
    deadline = time.monotonic() + wait_s
    while True:
        events = await topology.active.runtime.store.events_after(0)
        senders = [
            getattr(e.data, "sender_id", None) for e in events if e.type == "inbound_refused"
        ]
        if senders.count(str(STRANGER)) >= count:
            return
        assert time.monotonic() < deadline, f"Eve refused {senders.count(str(STRANGER))} times"
        await asyncio.sleep(0.05)


def codes(telegram: FakeTelegram) -> list[dict[str, Any]]:
    """Every message the bot sent that carries a pairing code, wherever it went."""
    return [m for m in telegram.sent() if CODE.search(m["text"])]


async def test_a_strangers_press_never_opens_a_pairing_request(
    topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await start_app(
        Path("unused"),
        anthropic_api,
        telegram_api,
        webhook_secret=SECRET,
        acme_extra={"pairing": {"enabled": True}},
        topology=topology,
    )
    url = f"http://127.0.0.1:{app.port}/telegram/acme"
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    presses = [
        press(801, GROUP, "notification_status"),
        press(802, GROUP, "stop"),
        press(803, EVES_DM, "approval_approve"),
        press(804, EVES_DM, "stop"),
    ]
    async with aiohttp.ClientSession() as http:
        for update in presses:
            async with http.post(url, json=update, headers=headers) as response:
                assert response.status == 200
        await refused(topology, len(presses))  # each press is refused and recorded
        await topology.active.bridge.settle()
        assert codes(telegram_api) == [], "no code for a press, in any chat"
        config = str(topology.folder / "switchboard.toml")
        status, out = await run_to_end("pairing", "list", "--config", config)
        assert status == 0 and "Pairing codes waiting for approval: none" in out, out

        async with http.post(url, json=eves_dm(805, "let me in"), headers=headers) as response:
            assert response.status == 200
    await until(lambda: any(CODE.search(t) for t in telegram_api.chat(STRANGER)))
    await until(lambda: len(codes(telegram_api)) == 2)  # Eve's, and the primary operator's ask
    assert {m["chat_id"] for m in codes(telegram_api)} == {STRANGER, ALICE}
