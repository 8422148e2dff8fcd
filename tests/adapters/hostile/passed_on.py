"""Text an operator passes on, in the shapes the platforms send it: Telegram forwards of each
`forward_origin` kind (checked against the Bot API spec like every update of
`real_payloads.py`), Slack shared and forwarded messages and link previews (unfurls)."""

from __future__ import annotations

from typing import Any

from tests.adapters.hostile.real_payloads import (
    STRANGER,
    envelope,
    slack_ts,
    tg_message,
    update,
)
from tests.adapters.slack_harness import ALICE, SlackSide

MALLORY_TG = {"id": STRANGER, "is_bot": False, "first_name": "Mallory", "username": "mallory"}
OTHER_GROUP = {"id": -1002000, "title": "Vendors", "type": "supergroup"}
OTHER_CHANNEL = {
    "id": -1003000,
    "title": "Deals Daily",
    "username": "dealsdaily",
    "type": "channel",
}


def forward_origin(kind: str) -> dict[str, Any]:
    """Where a forwarded message came from, each of the Bot API's four `MessageOrigin` kinds: a
    user, a user who hides their account (a name only), a group's anonymous admin (its chat), a
    channel post."""
    date = 1699990000
    return {
        "user": {"type": "user", "date": date, "sender_user": MALLORY_TG},
        "hidden_user": {"type": "hidden_user", "date": date, "sender_user_name": "Mallory"},
        "chat": {"type": "chat", "date": date, "sender_chat": OTHER_GROUP},
        "channel": {
            "type": "channel",
            "date": date,
            "chat": OTHER_CHANNEL,
            "message_id": 77,
            "author_signature": "Mallory",
        },
    }[kind]


def forwarded(text_: str, origin: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The operator forwards a message to the bot: Telegram sends the original's text (or its
    caption, entities, files) with its `forward_origin`, and nothing the operator wrote (a
    comment typed with a forward arrives as a message of its own, before it)."""
    return update("message", tg_message(text_, forward_origin=origin, **fields))


SHARED_FROM = "CVENDORS"  # a channel of the same team the shared message was posted in


def _rich_text(text_: str) -> list[dict[str, Any]]:
    section = {"type": "rich_text_section", "elements": [{"type": "text", "text": text_}]}
    return [{"type": "rich_text", "block_id": "Yyg6K", "elements": [section]}]


def _slack_message(
    slack: SlackSide, text_: str, attachments: list[dict[str, Any]], user: str, channel: str
) -> dict[str, Any]:
    ts = slack.fake.add_user_message(channel, text_, user, None)
    event = {
        "user": user,
        "type": "message",
        "ts": ts,
        "text": text_,
        "team": "T1",
        "attachments": attachments,
        "channel": channel,
        "event_ts": ts,
        "channel_type": "im" if channel.startswith("D") else "channel",
    }
    return envelope(event | ({"blocks": _rich_text(text_)} if text_ else {}))


def shared(
    slack: SlackSide,
    original: str,
    *,
    author: str,
    author_name: str,
    comment: str = "",
    user: str = ALICE,
    channel: str = "DALICE",
) -> dict[str, Any]:
    """`user` shares (or forwards) a message of `author` from #vendors into `channel`, with a
    `comment` or none: the event's text is the comment only, the shared message an attachment
    with `is_share` and `is_msg_unfurl` (as in the events slack-web keeps from real workspaces,
    tests/golden/SlackWebhookEvent/share_with_message.json, share_without_message.json and
    forwarded_message.json, on our ids)."""
    ts = slack_ts()
    permalink = f"https://acme.slack.com/archives/{SHARED_FROM}/p{ts.replace('.', '')}"
    share = {
        "from_url": permalink,
        "ts": ts,
        "author_id": author,
        "channel_id": SHARED_FROM,
        "channel_team": "T1",
        "channel_name": "vendors",
        "is_msg_unfurl": True,
        "message_blocks": [
            {
                "team": "T1",
                "channel": SHARED_FROM,
                "ts": ts,
                "message": {"blocks": _rich_text(original)},
            }
        ],
        "color": "D0D0D0",
        "is_share": True,
        "fallback": f"[November 14th, 2023 9:26 PM] {author_name}: {original}",
        "text": original,
        "author_name": author_name,
        "author_link": f"https://acme.slack.com/team/{author}",
        "author_icon": "https://avatars.slack-edge.com/2023-07-22/5607926127815_48.png",
        "author_subname": author_name,
        "mrkdwn_in": ["text"],
        "footer": "Posted in #vendors",
    }
    return _slack_message(slack, comment, [share], user, channel)


def link_unfurled(
    slack: SlackSide, url: str, *, title: str, description: str, user: str = ALICE
) -> dict[str, Any]:
    """`user` posts a link that Slack has already unfurled (its preview is in the message event,
    as in messages Slack stores; a preview Slack adds later comes as a `message_changed`): the
    attachment names the site, the page's title and its description."""
    preview = {
        "service_name": "blog.example.com",
        "title": title,
        "title_link": url,
        "text": description,
        "fallback": f"blog.example.com: {title}",
        "thumb_url": "https://blog.example.com/cover.jpg",
        "from_url": url,
        "original_url": url,
        "thumb_width": 640,
        "thumb_height": 360,
        "service_icon": "https://blog.example.com/favicon.ico",
        "id": 1,
    }
    return _slack_message(slack, f"worth reading? <{url}>", [preview], user, "DALICE")
