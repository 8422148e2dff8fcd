"""Files sent to the bot, downloaded as Telegram serves them to bots: `getFile`, then the file
from the same host as the configured API (`<host>/file/bot<token>/<file_path>`, as
api.telegram.org and a local Bot API server both serve it). python-telegram-bot builds that
URL from the bot's `base_file_url` (see `file_base_url`)."""

from __future__ import annotations

from typing import Any

from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError
from telegram.ext import Application

from adapters.telegram.platform import NAME
from bridge import FetchError, InboundFile

MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # the most the Bot API lets a bot download (getFile)


def file_base_url(api_base_url: str) -> str:
    """The file URL for an API URL: `https://api.telegram.org/bot` gives
    `https://api.telegram.org/file/bot` (python-telegram-bot appends the token)."""
    base = api_base_url.rstrip("/")
    return f"{base.removesuffix('/bot')}/file/bot"


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
            data = await found.download_as_bytearray()
        except BadRequest as exc:  # a NetworkError too, but a final answer
            raise self._error("Telegram refused it", exc, retryable=False) from exc
        except (RetryAfter, NetworkError) as exc:  # TimedOut is a NetworkError
            raise self._error("Telegram did not answer", exc, retryable=True) from exc
        except TelegramError as exc:
            raise self._error("Telegram refused it", exc, retryable=False) from exc
        return bytes(data)

    def _error(self, what: str, exc: TelegramError, *, retryable: bool) -> FetchError:
        """The reason, as the sender will read it: the file URL holds the bot's token, so
        the token is cut out of whatever the library said."""
        said = exc.message.replace(self._app.bot.token, "<token>")
        return FetchError(f"{what} ({said})", retryable=retryable)
