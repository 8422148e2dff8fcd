"""Slack through slack-bolt: events in (stored by the doors, or over Socket Mode), replies and
progress out."""

from adapters.slack.adapter import SlackAdapter
from adapters.slack.decoder import SlackDecoder
from adapters.slack.platform import SLACK
from adapters.slack.transport import SlackTransport

__all__ = ["SLACK", "SlackAdapter", "SlackDecoder", "SlackTransport"]
