"""Files in on Slack: how long the Events API request for a `file_share` takes to be
acknowledged (the download is not in that path), and how long from the ack until the prompt
with its file is stored, for a 4 MB PDF and a 1 MB PNG served by the loopback fake Web API
with the bot token. Loopback only; the model never answers (`HeldProvider`)."""

from __future__ import annotations

import asyncio
import io
import json
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp

from adapters.server.app import App
from bench.loopback import serve
from bench.runtime_bench import HeldProvider
from config import load
from tests.adapters.slack_harness import signature
from tests.config_file import workspace, write_config
from tests.fakes.slack_api import FakeSlack
from tests.files_samples import pdf, png

SECRET = "bench-signing-secret"
ROUNDS = 20


async def main() -> None:
    fake = FakeSlack()
    runner, fake.url = await serve(fake.app())
    team = fake.add_team("T1")
    tmp = tempfile.TemporaryDirectory()
    alice = {"id": "alice", "primary": True, "slack_user_id": "UALICE"}
    slack = {
        "team_id": "T1",
        "bot_token": team.token,
        "signing_secret": SECRET,
        "api_base_url": fake.base_url,
    }
    path = write_config(
        Path(tmp.name) / "c.toml",
        db=Path(tmp.name) / "b.db",
        workspaces=[workspace("acme", [alice], slack=slack)],
    )
    app = App(load(path), stdin=io.StringIO(), stdout=io.StringIO(), provider=HeldProvider())
    await app.start()
    url = f"http://127.0.0.1:{app.port}/slack/events"
    files = {
        "4 MB PDF": ("a.pdf", "application/pdf", pdf(1) + b"%" * 4 * 2**20),
        "1 MB PNG": ("a.png", "image/png", png(1000, 1000) + b"\0" * 2**20),
    }
    async with aiohttp.ClientSession() as http:
        for label, (name, mime, data) in files.items():
            acks, stored = [], []
            for i in range(ROUNDS):
                shared = fake.files.add("T1", "UALICE", name, mime, data)
                channel = f"D{label[:1]}{i:04d}"
                ts = fake.add_user_message(channel, "look", "UALICE")
                event = {
                    "type": "message",
                    "subtype": "file_share",
                    "user": "UALICE",
                    "text": "look",
                    "files": [shared],
                    "upload": False,
                    "ts": ts,
                    "channel": channel,
                    "channel_type": "im",
                    "event_ts": ts,
                }
                body = json.dumps(
                    {
                        "token": "t",
                        "team_id": "T1",
                        "api_app_id": "A",
                        "type": "event_callback",
                        "event_id": f"Ev{label[:1]}{i}",
                        "event_time": int(time.time()),
                        "event": event,
                    }
                )
                stamp = str(int(time.time()))
                headers = {
                    "Content-Type": "application/json",
                    "X-Slack-Request-Timestamp": stamp,
                    "X-Slack-Signature": signature(SECRET, stamp, body),
                }
                before = len(await app.runtime.store.messages())
                start = time.perf_counter()
                async with http.post(url, data=body, headers=headers) as response:
                    assert response.status == 200
                acked = time.perf_counter()
                # the prompt is stored by a background task: look for it in the store
                while len(await app.runtime.store.messages()) == before:  # noqa: ASYNC110
                    await asyncio.sleep(0.001)
                acks.append(acked - start)
                stored.append(time.perf_counter() - acked)
            print(
                f"{label}: ack p50 {1000 * statistics.median(acks):.1f} ms, max "
                f"{1000 * max(acks):.1f} ms; ack to prompt stored p50 "
                f"{1000 * statistics.median(stored):.1f} ms, max {1000 * max(stored):.1f} ms"
            )
    await app.stop()
    await runner.cleanup()
    tmp.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
