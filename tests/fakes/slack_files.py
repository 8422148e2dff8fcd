"""Files in the fake Slack workspace, served as Slack serves them to apps: `url_private` and
`url_private_download` answer only a request with a bot token of the file's workspace in an
`Authorization: Bearer` header; without one (or with another) Slack redirects to its login
page, which is what this does too. A file in `moved` is answered (to its bot) with a redirect
to the URL given there. Every download is recorded, so a test can tell that no
request for a file arrived at all."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Download:
    path: str
    team: str | None  # the workspace whose token came with it; None: no valid token


@dataclass
class SlackFiles:
    base_url: Callable[[], str]  # the fake's own URL, known once it listens
    tokens: Callable[[], dict[str, str]]  # bot token -> team id
    stored: dict[str, tuple[str, dict[str, Any], bytes]] = field(default_factory=dict)
    downloads: list[Download] = field(default_factory=list)
    moved: dict[str, str] = field(default_factory=dict)  # file id -> where it redirects
    gate: asyncio.Event | None = None  # set: downloads are answered only once it is set
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def add(
        self, team: str, user: str, name: str, mimetype: str, data: bytes, filetype: str = ""
    ) -> dict[str, Any]:
        """A file an operator uploaded; its object as a `file_share` event carries it."""
        file_id = f"F{next(self._ids):08d}"
        base = f"{self.base_url()}/files-pri/{team}-{file_id}"
        now = int(time.time())
        info: dict[str, Any] = {
            "id": file_id,
            "created": now,
            "timestamp": now,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": filetype or name.rsplit(".", 1)[-1],
            "pretty_type": (filetype or name.rsplit(".", 1)[-1]).upper(),
            "user": user,
            "user_team": team,
            "editable": False,
            "size": len(data),
            "mode": "hosted",
            "is_external": False,
            "external_type": "",
            "is_public": False,
            "public_url_shared": False,
            "display_as_bot": False,
            "username": "",
            "url_private": f"{base}/{name}",
            "url_private_download": f"{base}/download/{name}",
            "permalink": f"https://{team.lower()}.slack.test/files/{user}/{file_id}/{name}",
            "is_starred": False,
            "has_rich_preview": False,
            "file_access": "visible",
        }
        self.stored[file_id] = (team, info, data)
        return info

    def info(self, file_id: str, team: str) -> dict[str, Any] | None:
        found = self.stored.get(file_id)
        return found[1] if found and found[0] == team else None

    async def serve(self, request: web.Request) -> web.StreamResponse:
        """GET /files-pri/{team}-{file_id}/[download/]{name}"""
        team_id, _, file_id = request.match_info["key"].partition("-")
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        caller = self.tokens().get(token)
        self.downloads.append(Download(request.path, caller))
        found = self.stored.get(file_id)
        if caller is None or found is None or found[0] != caller or caller != team_id:
            login = f"https://{team_id.lower()}.slack.test/?redir={request.path}"
            return web.Response(status=302, headers={"Location": login})
        _, info, data = found
        if file_id in self.moved:
            return web.Response(status=302, headers={"Location": self.moved[file_id]})
        if self.gate is not None:
            await self.gate.wait()
        return web.Response(body=data, content_type=info["mimetype"])
