"""Slack through slack-bolt: events in over HTTP or Socket Mode, replies and progress out."""

from adapters.slack.adapter import SlackAdapter
from adapters.slack.front import SlackFront
from adapters.slack.platform import SLACK
from adapters.slack.transport import SlackTransport

__all__ = ["SLACK", "SlackAdapter", "SlackFront", "SlackTransport"]
