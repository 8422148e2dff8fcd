"""Slack's side: signed events into the replicas' doors, and the replies the fake Slack got."""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from bench.loopback import serve
from bench.replicas.processes import (
    ALICE,
    OPERATOR,
    Replica,
)
from bridge.texts import RESUMED_ANSWER
from tests.adapters.slack_harness import signature
from tests.config_file import Table, workspace
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack, Team

# -- Slack's side ------------------------------------------------------------------------


@dataclass
class SlackSide:
    """Slack workspaces (teams of the fake, each with its own signing secret and channels)
    and signed Events API requests as Slack sends them."""

    fake: FakeSlack
    teams: list[Team]
    channels: dict[str, list[str]]  # by team id; a channel id is unique across teams
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @classmethod
    def make(cls, fake: FakeSlack, workspaces: int, channels: Sequence[str]) -> SlackSide:
        teams = [fake.add_team(f"T{k:02d}") for k in range(workspaces)]
        named = {
            t.team_id: [f"{c}{t.team_id}" if workspaces > 1 else c for c in channels] for t in teams
        }
        return cls(fake, teams, named)

    @staticmethod
    def secret(team: Team) -> str:
        return f"bench-signing-secret-{team.team_id.lower()}"

    def workspaces(self, **more: Any) -> list[Table]:
        return [
            workspace(
                f"w{k}",
                [OPERATOR],
                slack={
                    "team_id": team.team_id,
                    "bot_token": team.token,
                    "signing_secret": self.secret(team),
                    "api_base_url": self.fake.base_url,
                    "channels": self.channels[team.team_id],
                },
                **more,
            )
            for k, team in enumerate(self.teams)
        ]

    def request(
        self, team: Team, channel: str, words: str, thread_ts: str | None = None
    ) -> tuple[bytes, dict[str, str], str]:
        """A signed `event_callback` for an operator's new message (also put in the fake
        workspace, so that reactions and replies find it); the body, headers and its ts."""
        ts = self.fake.add_user_message(channel, words, ALICE, thread_ts)
        event = {
            "type": "message",
            "channel_type": "channel",
            "user": ALICE,
            "text": words,
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
            "team": team.team_id,
        }
        if thread_ts is not None:
            event["thread_ts"] = thread_ts
        body = json.dumps(
            {
                "token": "legacy-verification-token",
                "team_id": team.team_id,
                "api_app_id": "A0SWITCH",
                "type": "event_callback",
                "event_id": f"Ev{next(self.ids):09d}",
                "event_time": int(time.time()),
                "authed_users": [team.bot_user_id],
                "event": event,
            }
        )
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature(self.secret(team), stamp, body),
        }
        return body.encode(), headers, ts

    async def post(
        self,
        http: aiohttp.ClientSession,
        replica: Replica,
        words: str,
        *,
        channel: str | None = None,
        thread_ts: str | None = None,
    ) -> str:
        """Post an operator's message to a replica's door; its ts, once answered 200."""
        body, headers, ts = self.request(
            self.teams[0], channel or self.channels[self.teams[0].team_id][0], words, thread_ts
        )
        async with http.post(f"{replica.url}/slack/events", data=body, headers=headers) as r:
            assert r.status == 200, (r.status, await r.text())
        return ts


RESUMED = RESUMED_ANSWER.partition("{answer}")[0]  # before an answer that went on after a kill


class Replies:
    """The bot's `chat.postMessage` calls seen by the fake, read incrementally: each reply
    text with when it arrived."""

    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        self.seen = 0
        self.texts: Counter[str] = Counter()
        self.first_at: dict[str, float] = {}

    def scan(self) -> None:
        calls, times = self.fake.calls, self.fake.call_times
        for (method, args, _), at in zip(calls[self.seen :], times[self.seen :], strict=True):
            if method == "chat.postMessage" and "blocks" not in args:
                words = str(args.get("text")).removeprefix(RESUMED)
                self.texts[words] += 1
                self.first_at.setdefault(words, at)
        self.seen = len(calls)

    def count(self, words: str) -> int:
        self.scan()
        return self.texts[words]


async def fakes() -> tuple[FakeSlack, FakeAnthropic, list[web.AppRunner]]:
    slack, model = FakeSlack(), FakeAnthropic()
    slack_runner, slack.url = await serve(slack.app())
    model_runner, model.url = await serve(model.app())
    return slack, model, [slack_runner, model_runner]


def last_text(body: dict[str, Any]) -> str:
    """What the model is asked about: its request's last message, as JSON text."""
    return json.dumps(body["messages"][-1])
