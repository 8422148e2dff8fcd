"""Files shared with the bot, downloaded as Slack serves them to apps: `url_private_download`
(or `url_private`) with the bot token as a Bearer header; `files.info` gives the URL when the
event did not. Without a valid token (or the `files:read` scope) Slack answers with a redirect
to its login page rather than an error, so a redirect or an HTML page is a refusal here.

The token goes only to an allowed origin (scheme, host and port alike): Slack's hosts over
https on 443 (files come from `https://files.slack.com/files-pri/...`), or, with another
`api_base_url` (a proxy or a test double), that URL's own origin. A redirect is never
followed, so the token never follows one elsewhere."""

from __future__ import annotations

from typing import Any, NamedTuple
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.inbound import files
from adapters.slack.platform import NAME
from bridge.attachments.source import FetchError
from bridge.types import InboundFile

DOWNLOAD_TIMEOUT_S = 120.0
CHUNK = 64 * 1024
REDIRECTS = {301, 302, 303, 307, 308}
DEFAULT_PORTS = {"http": 80, "https": 443}


class Origin(NamedTuple):
    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        default = self.port == DEFAULT_PORTS[self.scheme]
        return f"{self.scheme}://{self.host}" + ("" if default else f":{self.port}")


def origin_of(url: str) -> Origin | None:
    """Where `url` is served from, its port spelled out; None unless it is an absolute http(s)
    URL without credentials of its own."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # not a port number
        return None
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.username is not None:
        return None
    return Origin(scheme, parts.hostname, port or DEFAULT_PORTS[scheme])


class SlackFiles:
    platform = NAME
    max_bytes: int | None = None  # Slack sets no download limit of its own

    def __init__(self, client: AsyncWebClient, session: aiohttp.ClientSession, token: str) -> None:
        self._client = client
        self._session = session
        self._token = token
        self._api = origin_of(client.base_url)
        api_host = self._api.host if self._api else ""
        # Slack serves files from files.slack.com; a proxy or a test double, from its own origin.
        self._slack = api_host == "slack.com" or api_host.endswith(".slack.com")

    async def describe(self, workspace_id: str, file: InboundFile) -> InboundFile:
        """What `files.info` says of a file the event described only in part."""
        info = await self._info(file.file_id)
        [found] = files({"files": [info]}) or [file]
        return found

    async def fetch(self, workspace_id: str, file: InboundFile, max_bytes: int) -> bytes:
        url = file.url or await self._url(file.file_id)
        origin = origin_of(url)
        if origin is None or not self._allowed(origin):  # the bot token goes nowhere else
            raise FetchError(
                f"it is served from {origin or 'an unusable URL'}, not from the configured "
                f"Slack ({self._allowed_origins()})",
                retryable=False,
            )
        headers = {"Authorization": f"Bearer {self._token}"}
        timeout = aiohttp.ClientTimeout(total=DOWNLOAD_TIMEOUT_S)
        try:
            async with self._session.get(
                url, headers=headers, allow_redirects=False, timeout=timeout
            ) as response:
                self._refused(response, file)
                data = bytearray()
                async for chunk in response.content.iter_chunked(CHUNK):
                    data += chunk
                    if len(data) > max_bytes:
                        raise FetchError(f"it is over {max_bytes} bytes", retryable=False)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise FetchError(f"Slack did not answer ({_why(exc)})", retryable=True) from exc
        return bytes(data)

    def _allowed(self, origin: Origin) -> bool:
        if self._slack:
            slack_host = origin.host.endswith(".slack.com")
            return origin.scheme == "https" and origin.port == 443 and slack_host
        return origin == self._api

    def _allowed_origins(self) -> str:
        if self._slack:
            return "https://*.slack.com"
        return str(self._api) if self._api else "no usable api_base_url"

    @staticmethod
    def _refused(response: aiohttp.ClientResponse, file: InboundFile) -> None:
        status = response.status
        html = response.content_type == "text/html" and file.mime_type != "text/html"
        if status in REDIRECTS or (status == 200 and html):
            raise FetchError(
                "Slack sent its login page instead of the file; give the app the files:read "
                "scope and reinstall it",
                retryable=False,
            )
        if status == 429 or status >= 500:
            raise FetchError(f"Slack answered {status}", retryable=True)
        if status != 200:
            raise FetchError(f"Slack answered {status}", retryable=False)

    async def _info(self, file_id: str) -> dict[str, Any]:
        try:
            info = await self._client.files_info(file=file_id)
        except SlackApiError as exc:
            error = exc.response.get("error")
            raise FetchError(f"files.info refused it ({error})", retryable=False) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise FetchError(f"Slack did not answer ({_why(exc)})", retryable=True) from exc
        found = info.get("file")
        return found if isinstance(found, dict) else {}

    async def _url(self, file_id: str) -> str:
        found = await self._info(file_id)
        url = found.get("url_private_download") or found.get("url_private")
        if not url:
            raise FetchError("Slack gave no download URL for it", retryable=False)
        return str(url)


def _why(exc: Exception) -> str:
    """What went wrong, never the request: aiohttp's errors carry its headers (the bot token)
    in their repr, and this text is told to the operator and stored."""
    if isinstance(exc, aiohttp.ClientResponseError):
        return f"{type(exc).__name__}, HTTP {exc.status}"
    return type(exc).__name__
