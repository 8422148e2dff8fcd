"""Streamed answers (issue 12): how soon the operator sees the first words, and what an
answer of 2,000 characters costs in platform calls, on Telegram (a private chat: drafts; a
group: edits of one message) and Slack (an assistant thread: chat.startStream/appendStream; a
channel: chat.update of the progress message). The real App (presenter, pacing, outbox,
python-telegram-bot, slack_sdk) against loopback fakes that enforce the platforms' limits and
count every 429. The model is in-process: its first token after `ttft_s`, then about 80 tokens
(320 characters) a second, as a fast model writes."""

from __future__ import annotations

import asyncio
import io
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from adapters.server.app import App
from bench.loopback import serve
from config import load
from runtime.providers.base import (
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    StopReason,
    TextSink,
)
from runtime.transcript import TextBlock
from tests.adapters.slack_harness import SlackSide
from tests.config_file import workspace, write_config
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram

SECRET = "bench-signing-secret"
CHARS = 2000
FIRST_WORD = "ANSWER-"  # how every answer begins (its first delta holds it whole)
NOT_COUNTED = {"getUpdates", "getMe", "setMyCommands", "deleteWebhook", "auth.test"}


@dataclass
class StreamingModel:
    """Answers `chars` characters that begin with a marker of the prompt, streamed."""

    ttft_s: float = 0.5
    chars_per_s: float = 320.0
    model: str = "bench"
    first_token: dict[str, float] = field(default_factory=dict)  # by marker

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        prompt = request.messages[-1].text().strip()
        marker = f"ANSWER-{prompt.split()[-1]}"
        words = (marker + " " + "lorem ipsum dolor sit amet, consectetur " * 60)[:CHARS]
        await asyncio.sleep(self.ttft_s)
        self.first_token[marker] = time.monotonic()
        step = 16  # characters a delta: about four tokens
        for at in range(0, len(words), step):
            on_text(words[at : at + step])
            await asyncio.sleep(step / self.chars_per_s)
        return ProviderResponse([TextBlock(text=words)], StopReason.END_TURN, self.model)

    async def close(self) -> None:
        return None


@dataclass
class Result:
    first_visible_s: float  # from the model's first token to the first words in the chat
    calls: Counter[str]  # platform calls for the turn, by method
    too_many: int  # 429s the fake answered


async def run() -> dict[str, Result]:
    telegram, slack = FakeTelegram(), FakeSlack()
    tg_runner, telegram.url = await serve(telegram.app())
    slack_runner, slack.url = await serve(slack.app())
    team = slack.add_team("T1", assistant=True)
    model = StreamingModel()
    results: dict[str, Result] = {}
    with tempfile.TemporaryDirectory() as tmp:
        operator = {"id": "op", "primary": True, "telegram_user_id": 1001, "slack_user_id": "UOP"}
        acme = workspace(
            "acme",
            [operator],
            telegram={
                "bot_token": telegram.token,
                "api_base_url": telegram.base_url,
                "chats": [-100],
            },
            slack={
                "team_id": "T1",
                "bot_token": team.token,
                "signing_secret": SECRET,
                "api_base_url": slack.base_url,
                "channels": ["COPS"],
            },
        )
        config = load(write_config(Path(tmp) / "c.toml", db=Path(tmp) / "d.db", workspaces=[acme]))
        app = App(config, stdin=io.StringIO(), stdout=io.StringIO(), provider=model)
        await app.start()
        side = SlackSide(app, slack)
        try:
            telegram.push_message("stream tgdm", user=1001)
            results["Telegram private chat (drafts)"] = await _telegram(app, telegram, model, 1001)
            telegram.push_message("stream tggroup", user=1001, chat=-100, chat_type="supergroup")
            results["Telegram group (edits)"] = await _telegram(app, telegram, model, -100)
            parent = slack.add_user_message("DOP", "a thread", "UOP")
            await side.say(
                "stream slackstream", user="UOP", channel="DOP", thread_ts=parent, secret=SECRET
            )
            results["Slack assistant thread (streaming methods)"] = await _slack(
                app, slack, model, "DOP"
            )
            await side.say("stream slackupdate", user="UOP", channel="COPS", secret=SECRET)
            results["Slack channel (chat.update)"] = await _slack(app, slack, model, "COPS")
        finally:
            await app.stop()
    await tg_runner.cleanup()
    await slack_runner.cleanup()
    return results


async def _telegram(app: App, fake: FakeTelegram, model: StreamingModel, chat: int) -> Result:
    start = len(fake.calls)
    await _answered(app)
    calls = [c for c in fake.calls[start:] if c.params.get("chat_id") == chat]
    marker = next(m for m in model.first_token if m.lower().endswith(_suffix(chat)))
    seen = min(c.at for c in calls if FIRST_WORD in str(c.params.get("text", "")))
    return Result(
        seen - model.first_token[marker],
        Counter(c.method for c in calls if c.method not in NOT_COUNTED),
        fake.too_many,
    )


async def _slack(app: App, fake: FakeSlack, model: StreamingModel, channel: str) -> Result:
    start = len(fake.calls)
    await _answered(app)
    calls = [
        (m, a, at)
        for (m, a, _), at in zip(fake.calls[start:], fake.call_times[start:], strict=True)
        if a.get("channel", a.get("channel_id")) == channel and m not in NOT_COUNTED
    ]
    marker = next(m for m in model.first_token if m.lower().endswith(_suffix(channel)))
    seen = min(
        at for _, a, at in calls if FIRST_WORD in str(a.get("text") or a.get("markdown_text"))
    )
    return Result(seen - model.first_token[marker], Counter(m for m, _, _ in calls), fake.too_many)


def _suffix(where: int | str) -> str:
    return {1001: "tgdm", -100: "tggroup", "DOP": "slackstream", "COPS": "slackupdate"}[where]


async def _answered(app: App) -> None:
    """Until the turn has finished and its answer went out (and its progress was cleared)."""
    await asyncio.sleep(0.2)
    await app.bridge.settle()
    await asyncio.sleep(1.5)  # the progress clear runs in the background, paced


async def main() -> None:
    print(f"| streamed answer of {CHARS:,} characters | first words seen | calls | 429 |")
    print("|---|---|---|---|")
    for name, r in (await run()).items():
        calls = ", ".join(f"{n} {m}" for m, n in r.calls.most_common())
        print(
            f"| {name} | {r.first_visible_s * 1000:.0f} ms after the first token | "
            f"{sum(r.calls.values())} ({calls}) | {r.too_many} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
