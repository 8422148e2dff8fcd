"""Delivery under load (issue 9): eight concurrent turns on Telegram and eight on Slack at once,
in one process, each working for a few seconds (progress: the message, its edits, typing or
a status line) and then answering in two messages, while the fakes inject 429s. The real App:
outbox, pacing, progress presenter, python-telegram-bot and slack_sdk's AsyncWebClient,
against loopback fakes that enforce the platforms' limits and count every 429 they answer:
injected, or caused by our own pacing (the goal: none).

Telegram: four private chats and four topics of one forum group (20 messages a minute).
Slack: four DMs and four threads of one channel (one post a second). The model is in-process
and answers at once; only its `sleep` tool takes time."""

from __future__ import annotations

import asyncio
import io
import statistics
import tempfile
import time
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
from runtime.transcript import TextBlock, ToolResultBlock, ToolUseBlock
from tests.adapters.slack_harness import SlackSide
from tests.config_file import workspace, write_config
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram

SECRET = "bench-signing-secret"
OPERATORS = 4


@dataclass
class WorkingModel:
    """`rounds` sleep calls of `seconds` each, then an answer of about `chars` characters
    that starts with the prompt. Records when it answered each prompt."""

    rounds: int = 6
    seconds: float = 0.5
    chars: int = 6000
    model: str = "bench"
    answered: dict[str, float] = field(default_factory=dict)

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        prompt_at = max(
            i
            for i, m in enumerate(request.messages)
            if m.role == "user" and m.text() and not m.text().startswith("[")
        )
        prompt = request.messages[prompt_at].text().strip()
        done = sum(
            isinstance(b, ToolResultBlock) for m in request.messages[prompt_at:] for b in m.blocks
        )
        if done < self.rounds:
            call = ToolUseBlock(
                id=f"toolu_{prompt.replace(' ', '_')}_{done}",
                name="sleep",
                input={"seconds": self.seconds},
            )
            return ProviderResponse([call], StopReason.TOOL_USE, self.model)
        lines = [f"{prompt} line {n:03d} " + "lorem ipsum dolor sit amet " * 2 for n in range(200)]
        answer = "\n".join(lines)[: self.chars]
        self.answered[prompt] = time.monotonic()
        on_text(answer)
        return ProviderResponse([TextBlock(text=answer)], StopReason.END_TURN, self.model)

    async def close(self) -> None:
        return None


@dataclass
class Result:
    seconds: float
    replies: int  # reply messages delivered
    progress: int  # progress calls answered: posts, edits, typing or status, deletes
    injected: int
    self_caused: int
    first_part_p50_s: float  # from the model's answer to the reply's first message
    first_part_max_s: float


async def run(turns_per_platform: int = 8, injected: int = 3) -> dict[str, Result]:
    telegram, slack = FakeTelegram(), FakeSlack()
    tg_runner, telegram.url = await serve(telegram.app())
    slack_runner, slack.url = await serve(slack.app())
    team = slack.add_team("T1")
    model = WorkingModel()
    with tempfile.TemporaryDirectory() as tmp:
        operators = [
            {
                "id": f"op{i}",
                "primary": i == 0,
                "telegram_user_id": 1001 + i,
                "slack_user_id": f"UOP{i}",
            }
            for i in range(OPERATORS)
        ]
        acme = workspace(
            "acme",
            operators,
            telegram={
                "bot_token": telegram.token,
                "api_base_url": telegram.base_url,
                "chats": [-100],
            },
            slack={
                "team_id": "T1",
                "bot_token": team.token,
                "signing_secret": SECRET,
                "request_timeout_s": 10,
                "api_base_url": slack.base_url,
                "channels": ["COPS"],
            },
            agent_tools=["sleep"],
        )
        config = load(write_config(Path(tmp) / "c.toml", db=Path(tmp) / "d.db", workspaces=[acme]))
        app = App(config, stdin=io.StringIO(), stdout=io.StringIO(), provider=model)
        await app.start()
        try:
            side = SlackSide(app, slack)
            telegram.fail(
                "sendMessage",
                429,
                "Too Many Requests: retry after 1",
                retry_after=1,
                times=injected,
                when=lambda p: "reply_markup" not in p,
            )
            slack.fail(
                "chat.postMessage",
                429,
                retry_after=1,
                times=injected,
                when=lambda args: "blocks" not in args,
            )
            start = time.monotonic()
            half = turns_per_platform // 2
            for i in range(half):  # private chats, and topics of one group
                telegram.push_message(f"tg dm {i}", user=1001 + i)
                telegram.push_message(
                    f"tg topic {i}", user=1001, chat=-100, chat_type="supergroup", thread=10 + i
                )
            for i in range(half):  # DMs, and threads of one channel
                await side.say(f"slack dm {i}", user=f"UOP{i}", channel=f"DOP{i}", secret=SECRET)
                await side.say(f"slack thread {i}", user="UOP0", channel="COPS", secret=SECRET)
            want = 2 * turns_per_platform  # two messages an answer
            for _ in range(2400):
                tg_parts = [m for m in telegram.sent() if "reply_markup" not in m]
                if len(tg_parts) >= want and len(slack.posts()) >= want:
                    break
                await asyncio.sleep(0.05)
            await app.bridge.settle()
            seconds = time.monotonic() - start
        finally:
            await app.stop()
    await tg_runner.cleanup()
    await slack_runner.cleanup()

    tg_replies = [
        (c.params["text"], c.at)
        for c in telegram.calls
        if c.method == "sendMessage" and "reply_markup" not in c.params
    ]
    slack_replies = [
        (a["text"], at)
        for (m, a, _), at in zip(slack.calls, slack.call_times, strict=True)
        if m == "chat.postMessage" and "blocks" not in a
    ]
    tg_progress = sum(
        c.method in ("sendChatAction", "editMessageText", "deleteMessage")
        or (c.method == "sendMessage" and "reply_markup" in c.params)
        for c in telegram.calls
    )
    slack_progress = sum(
        m in ("chat.update", "chat.delete", "assistant.threads.setStatus")
        or (m == "chat.postMessage" and "blocks" in a)
        for m, a, _ in slack.calls
    )
    results = {}
    for name, replies, progress, fake in (
        ("telegram", tg_replies, tg_progress, telegram),
        ("slack", slack_replies, slack_progress, slack),
    ):
        prefix = "tg" if name == "telegram" else "slack"
        answered = {p: t for p, t in model.answered.items() if p.startswith(prefix)}
        waits = _waits(name, answered, replies)
        results[name] = Result(
            seconds,
            len(replies),
            progress,
            fake.injected_429,
            len(fake.self_caused),
            statistics.median(waits),
            waits[-1],
        )
    return results


def _waits(name: str, answered: dict[str, float], replies: list[tuple[str, float]]) -> list[float]:
    """For each answer, from the model's answer to the arrival of its reply's first message."""
    first: dict[str, float] = {}
    for text, at in replies:
        first.setdefault(text.split(" line ")[0], at)
    missing = set(answered) - set(first)
    assert not missing, f"{name}: no reply to {sorted(missing)}"
    return sorted(first[p] - answered[p] for p in answered)


async def main() -> None:
    print("| delivery: 8 turns a platform, both at once | result | target |")
    print("|---|---|---|")
    for injected in (3, 0):
        results = await run(injected=injected)
        for name, r in results.items():
            print(
                f"| {name}, {injected} x 429 injected: {r.replies} reply messages and "
                f"{r.progress} progress calls in {r.seconds:.1f} s | "
                f"{r.replies / r.seconds:.1f} reply messages/s, "
                f"{(r.replies + r.progress) / r.seconds:.1f} calls/s; 429: {r.injected} "
                f"injected, {r.self_caused} self-caused; answer to its first message p50 "
                f"{r.first_part_p50_s:.2f} s, max {r.first_part_max_s:.2f} s | "
                "0 self-caused |"
            )


if __name__ == "__main__":
    asyncio.run(main())
