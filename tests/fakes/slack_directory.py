"""Who and what the fake workspace's ids are (`conversations.info`, `users.info`), in the
shapes of Slack's method pages: a channel object with its `name` (none for a DM: `is_im`,
with the `user` it is with), a user with `name`, `real_name` and a `profile` holding
`display_name` (empty when the person set none) and `real_name`.

An id nobody named is known by its own letters, as the rest of the fake does (channel `COPS`
is "ops", user `UALICE` is Alice); `unknown` ids answer `channel_not_found` or
`user_not_found`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.fakes.slack_spec import SlackError

CREATED = 1_700_000_000


@dataclass
class SlackDirectory:
    channels: dict[str, str] = field(default_factory=dict)  # id -> name, without the '#'
    people: dict[str, str] = field(default_factory=dict)  # id -> display name
    unknown: set[str] = field(default_factory=set)

    def conversation(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args.get("channel") or "")
        if not channel or channel in self.unknown:
            raise SlackError("channel_not_found")
        if channel.startswith("D"):
            return {
                "channel": {
                    "id": channel,
                    "created": CREATED,
                    "is_im": True,
                    "is_org_shared": False,
                    "user": "U" + channel[1:],
                    "is_user_deleted": False,
                    "priority": 0,
                }
            }
        name = self.channels.get(channel, channel[1:].lower())
        private = channel.startswith("G")
        return {
            "channel": {
                "id": channel,
                "name": name,
                "is_channel": not private,
                "is_group": private,
                "is_im": False,
                "is_mpim": False,
                "is_private": private,
                "created": CREATED,
                "is_archived": False,
                "is_general": False,
                "unlinked": 0,
                "name_normalized": name,
                "is_shared": False,
                "is_org_shared": False,
                "is_member": True,
                "creator": "UADMIN",
                "topic": {"value": "", "creator": "", "last_set": 0},
                "purpose": {"value": "", "creator": "", "last_set": 0},
            }
        }

    def user(self, args: dict[str, Any], team_id: str) -> dict[str, Any]:
        user = str(args.get("user") or "")
        if not user or user in self.unknown:
            raise SlackError("user_not_found")
        real = user[1:].capitalize()
        display = self.people.get(user, real)
        return {
            "user": {
                "id": user,
                "team_id": team_id,
                "name": user[1:].lower(),
                "deleted": False,
                "real_name": real,
                "tz": "Europe/Berlin",
                "is_bot": False,
                "is_admin": False,
                "updated": CREATED,
                "profile": {
                    "real_name": real,
                    "real_name_normalized": real,
                    "display_name": display,
                    "display_name_normalized": display,
                    "team": team_id,
                },
            }
        }
