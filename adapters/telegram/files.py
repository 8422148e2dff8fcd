"""Files sent to the bot, downloaded as Telegram serves them to bots: `getFile`, then the file
from the same host as the configured API (`<host>/file/bot<token>/<file_path>`, as
api.telegram.org and a local Bot API server both serve it), below the bot's `base_file_url`
(see `file_base_url`).

The file is always fetched over HTTP, never read from this machine's disk: python-telegram-bot
leaves a `file_path` that names a local file as it is, and its `File.download_*` then read
that file (meant for a Bot API server in local mode, which this bridge does not run). So the
file URL is built here, from a plain relative `file_path` only, and fetched with the bot's
own HTTP client."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError
from telegram.ext import Application

from adapters.telegram.platform import NAME
from bridge.attachments.source import FetchError
from bridge.types import InboundFile

log = logging.getLogger(__name__)

MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # the most the Bot API lets a bot download (getFile)
NOT_RELATIVE = "Telegram named a path that is not a plain relative path on its file server"


def file_base_url(api_base_url: str) -> str:
    """The file URL for an API URL: `https://api.telegram.org/bot` gives
    `https://api.telegram.org/file/bot` (python-telegram-bot appends the token)."""
    base = api_base_url.rstrip("/")
    return f"{base.removesuffix('/bot')}/file/bot"


def plain_relative(path: str) -> bool:
    """Whether `path` is a plain relative path, as Telegram names its files
    (`documents/file_3.pdf`): not empty, no leading `/`, no `.`, `..` or empty segment."""
    segments = path.replace("\\", "/").split("/")
    return bool(path) and all(segment not in ("", ".", "..") for segment in segments)


class TelegramFiles:
    platform = NAME
    max_bytes: int | None = MAX_DOWNLOAD_BYTES

    def __init__(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        self._app = application

    async def describe(self, workspace_id: str, file: InboundFile) -> InboundFile:
        """Telegram describes every file in the message itself."""
        return file

    async def fetch(self, workspace_id: str, file: InboundFile, max_bytes: int) -> bytes:
        try:
            found = await self._app.bot.get_file(file.file_id)
            if found.file_size is not None and found.file_size > max_bytes:
                raise FetchError(
                    f"Telegram says it is {found.file_size} bytes, over {max_bytes}",
                    retryable=False,
                )
            data = await self._download(workspace_id, found.file_path)
        except BadRequest as exc:  # a NetworkError too, but a final answer
            raise self._error("Telegram refused it", exc, retryable=False) from exc
        except (RetryAfter, NetworkError) as exc:  # TimedOut is a NetworkError
            raise self._error("Telegram did not answer", exc, retryable=True) from exc
        except TelegramError as exc:
            raise self._error("Telegram refused it", exc, retryable=False) from exc
        return bytes(data)

    async def _download(self, workspace_id: str, file_path: str | None) -> bytes:
        """The file at `file_path` below the bot's file URL, over HTTP. `bot.get_file` has put
        that URL (which holds the token) before the path unless the path named a local file;
        either way the same path comes out here, whatever is on this machine's disk."""
        bot = self._app.bot
        named = (file_path or "").removeprefix(f"{bot.base_file_url}/")
        if not plain_relative(named):
            log.warning(
                "telegram file path refused",
                extra={"workspace_id": workspace_id, "file_path": named},
            )
            raise FetchError(NOT_RELATIVE, retryable=False)
        data: bytes = await bot.request.retrieve(f"{bot.base_file_url}/{quote(named)}")
        return data

    def _error(self, what: str, exc: TelegramError, *, retryable: bool) -> FetchError:
        """The reason, as the sender will read it: the file URL holds the bot's token, so
        the token is cut out of whatever the library said."""
        said = exc.message.replace(self._app.bot.token, "<token>")
        return FetchError(f"{what} ({said})", retryable=retryable)
