"""Slack's bots, as the main process runs them (`plugin.py` loads them)."""

from __future__ import annotations

from adapters.bots import PlatformKind
from adapters.slack.adapter import SlackAdapter
from adapters.slack.files import SlackFiles
from adapters.slack.platform import SLACK

SLACK_BOTS = PlatformKind(SLACK, SlackAdapter, SlackFiles.max_bytes)
