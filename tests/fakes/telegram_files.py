"""Files in the fake Bot API, served as Telegram serves them to bots: `getFile` (checked
against the spec like every method) answers a `File` with a `file_path`, refusing an unknown
file id and anything over the 20 MB a bot may download; the bytes come from
`/file/bot<token>/<file_path>` on the same host, for the right token only. Every download is
recorded, so a test can tell that no request for a file arrived at all."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024


class FileRefused(Exception):
    pass


@dataclass
class TelegramFiles:
    token: str
    stored: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # file_id -> path, data
    downloads: list[str] = field(default_factory=list)  # paths asked for, good token or not
    declared: dict[str, int] = field(default_factory=dict)  # sizes claimed beyond the bytes
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def add(
        self,
        data: bytes,
        folder: str,
        suffix: str,
        size: int | None = None,
        path: str | None = None,
    ) -> dict[str, Any]:
        """A file a user sent; its `file_id`, `file_unique_id` and `file_size` for a message.
        `size`: what Telegram says it weighs, when a test wants more than the bytes given;
        `path`: the `file_path` getFile answers, when a test wants one of its own."""
        n = next(self._ids)
        file_id = f"AgAC{n:06d}fileid"
        self.stored[file_id] = (path or f"{folder}/file_{n}.{suffix}", data)
        if size is not None:
            self.declared[file_id] = size
        return {
            "file_id": file_id,
            "file_unique_id": f"AQAD{n:06d}",
            "file_size": size if size is not None else len(data),
        }

    def get_file(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = str(params["file_id"])
        if file_id not in self.stored:
            raise FileRefused("Bad Request: invalid file_id")
        path, data = self.stored[file_id]
        size = self.declared.get(file_id, len(data))
        if size > MAX_DOWNLOAD_BYTES:
            raise FileRefused("Bad Request: file is too big")
        return {
            "file_id": file_id,
            "file_unique_id": file_id.replace("fileid", "u"),
            "file_size": size,
            "file_path": path,
        }

    async def serve(self, request: web.Request) -> web.Response:
        """GET /file/bot{token}/{path}"""
        path = request.match_info["path"]
        self.downloads.append(path)
        found = next((d for p, d in self.stored.values() if p == path), None)
        if request.match_info["token"] != self.token or found is None:
            return web.json_response(
                {"ok": False, "error_code": 404, "description": "Not Found"}, status=404
            )
        return web.Response(body=found, content_type="application/octet-stream")
