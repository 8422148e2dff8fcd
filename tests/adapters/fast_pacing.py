"""Telegram's one message a second in a chat, taken as a tenth of a second, in the fake and in
the bridge's pacing alike: for a test of what a conversation does (a queue, memory, a
restart), not of the pacing (tests/adapters/test_telegram_pacing.py is), whose replies into
one chat would otherwise each wait out a second. The bot's 30 a second, a group's 20 a minute
and the progress spreads are left as they are. Only the bridge of this process is paced so:
a `switchboard run` subprocess paces as it always does."""

from __future__ import annotations

import dataclasses

import pytest

from adapters.telegram import bots
from adapters.telegram.platform import PACING, TelegramProfile
from tests.fakes.telegram_api import FakeTelegram

FASTER = 10


def faster_telegram(monkeypatch: pytest.MonkeyPatch, telegram: FakeTelegram) -> None:
    """Pace a chat's messages (and drafts) `FASTER` times closer, in `telegram` and in every
    App this test starts from now on."""
    second = PACING.per_conversation_interval_s
    rules = tuple(
        dataclasses.replace(r, per_s=r.per_s / FASTER) if r.count == 1 and r.per_s == second else r
        for r in PACING.rules
    )
    pacing = dataclasses.replace(PACING, per_conversation_interval_s=second / FASTER, rules=rules)
    profile = TelegramProfile(limits=pacing)  # what the bridge paces Telegram by
    monkeypatch.setattr(
        bots, "TELEGRAM_BOTS", dataclasses.replace(bots.TELEGRAM_BOTS, profile=profile)
    )
    telegram.per_chat_interval_s /= FASTER
