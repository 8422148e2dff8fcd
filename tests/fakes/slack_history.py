"""Reading a conversation as the fake Web API serves it (`conversations.history`,
`conversations.replies`, from Slack's method pages): newest first or a thread's messages,
paged by cursor, without the fields Slack leaves out."""

from __future__ import annotations

from typing import Any

from tests.fakes.slack_spec import SlackError, truthy


def history(
    messages: dict[str, list[dict[str, Any]]], method: str, args: dict[str, Any]
) -> dict[str, Any]:
    if "channel" not in args:
        raise SlackError("channel_not_found")
    found = messages.get(args["channel"], [])
    if method == "conversations.replies":
        if "ts" not in args:
            raise SlackError("invalid_arguments: missing ts")
        found = [m for m in found if args["ts"] in (m["ts"], m["thread_ts"])]
    else:
        found = [m for m in reversed(found) if m["thread_ts"] in (None, m["ts"])]
    start = int(args.get("cursor") or 0)
    limit = int(args.get("limit") or 100)
    page = found[start : start + limit]
    with_metadata = truthy(args.get("include_all_metadata"))
    # As Slack shows them: no empty fields (a message outside a thread has no thread_ts).
    shown = [
        {
            k: v
            for k, v in m.items()
            if k != "bot" and v is not None and (with_metadata or k != "metadata")
        }
        for m in page
    ]
    more = start + limit < len(found)
    return {
        "messages": shown,
        "has_more": more,
        "response_metadata": {"next_cursor": str(start + limit) if more else ""},
    }
