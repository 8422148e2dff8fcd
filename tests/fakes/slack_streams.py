"""Slack's streaming methods as the fake Web API serves them (`chat.startStream`,
`chat.appendStream`, `chat.stopStream`, from Slack's method pages)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.fakes.slack_spec import SlackError

if TYPE_CHECKING:
    from tests.fakes.slack_api import FakeSlack, Team


def stream(fake: FakeSlack, method: str, args: dict[str, Any], team: Team) -> dict[str, Any]:
    """A streamed message: started with its first text, appended to, stopped."""
    if not (team.assistant if team.streaming is None else team.streaming):
        raise SlackError("missing_scope")
    channel = args["channel"]
    if method == "chat.startStream":
        if not channel.startswith("D") and not (
            args.get("recipient_team_id") and args.get("recipient_user_id")
        ):
            raise SlackError("invalid_arguments")  # a channel needs the recipient
        message = fake._post({**args, "text": args.get("markdown_text") or ""}, team)
        message["streaming"] = True
        return {"channel": channel, "ts": message["ts"]}
    message = fake._find(channel, args["ts"])
    if not message.get("streaming"):
        raise SlackError("message_not_in_streaming_state")
    message["text"] += args.get("markdown_text") or ""
    if method == "chat.stopStream":
        message["streaming"] = False
    return {"channel": channel, "ts": args["ts"]}
