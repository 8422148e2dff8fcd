"""Telegram's and Slack's one message a second in a chat, taken as a tenth of a second, in the
fakes and in the bridge's pacing alike: for a test of what a conversation does (a queue,
memory, a restart), not of the pacing, whose replies into one chat would otherwise each wait
out a second. Every test gets it (`tests/adapters/conftest.py`) but one marked
`real_pacing`: the tests of the pacing, of 429s and of streaming. The bot's 30 a second, a
group's 20 a minute, the per-minute tiers and the progress spreads are left as they are. Only
the bridge of this process is paced so: a `switchboard run` subprocess paces as it always
does."""

from __future__ import annotations

import dataclasses

import pytest

from adapters.slack import bots as slack_bots
from adapters.slack.platform import PACING as SLACK_PACING
from adapters.slack.platform import SlackProfile
from adapters.telegram import bots
from adapters.telegram.platform import PACING, TelegramProfile
from bridge.transport import Pacing
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram

FASTER = 10


def faster_telegram(monkeypatch: pytest.MonkeyPatch, telegram: FakeTelegram) -> None:
    """Pace a chat's messages (and drafts) `FASTER` times closer, in `telegram` and in every
    App this test starts from now on."""
    profile = TelegramProfile(limits=_faster(PACING))  # what the bridge paces Telegram by
    monkeypatch.setattr(
        bots, "TELEGRAM_BOTS", dataclasses.replace(bots.TELEGRAM_BOTS, profile=profile)
    )
    telegram.per_chat_interval_s /= FASTER


def faster_slack(monkeypatch: pytest.MonkeyPatch, slack: FakeSlack) -> None:
    """Pace a channel's posts `FASTER` times closer, in `slack` and in every App this test
    starts from now on."""
    profile = SlackProfile(limits=_faster(SLACK_PACING))
    monkeypatch.setattr(
        slack_bots, "SLACK_BOTS", dataclasses.replace(slack_bots.SLACK_BOTS, profile=profile)
    )
    slack.post_interval_s /= FASTER


def _faster(pacing: Pacing) -> Pacing:
    """A chat's one message a second, `FASTER` times closer."""
    second = pacing.per_conversation_interval_s
    rules = tuple(
        dataclasses.replace(r, per_s=r.per_s / FASTER) if r.count == 1 and r.per_s == second else r
        for r in pacing.rules
    )
    return dataclasses.replace(pacing, per_conversation_interval_s=second / FASTER, rules=rules)
