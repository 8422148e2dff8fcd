"""The Slack Web API calls of every turn (a reply's `chat.postMessage`, the reactions on the
operator's message) sent straight to the workspace's connection pool, as slack_sdk sends them.

slack_sdk's work for each call cost about as much CPU as the HTTP request itself: it joins the
URL again, builds the headers again, looks up whether the method is deprecated, reading the
environment, and wraps the request and response for retry handlers we give it none of (issue
45: 0.3 ms a call against 0.2 ms straight). Nothing of what goes out changes: the URL and the
headers are those the SDK builds (by its own functions, once), the body is the one it encodes
(None values left out, as its methods leave them out). What comes back is read as it reads it
(`_request_with_session`: JSON, else no data) and becomes its own `AsyncSlackResponse`,
checked by its own `validate`, so a refusal is its `SlackApiError`, with the same response.
A client that makes its calls its own way (retry handlers, a proxy, TLS settings, default
parameters, no open session) makes them through the SDK.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse
from slack_sdk.web.internal_utils import (
    _build_req_args,
    _build_unexpected_body_error_message,
    _get_url,
)


class StraightCalls:
    """Calls to one workspace through its client's own session."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client
        # (method, a JSON body) -> the URL and headers the SDK sends it with
        self._prepared: dict[tuple[str, bool], tuple[str, dict[str, str]]] = {}

    def _straight(self) -> aiohttp.ClientSession | None:
        client = self._client
        session = client.session
        if (
            session is None
            or session.closed
            or client.retry_handlers
            or client.proxy is not None
            or client.ssl is not None
            or client.default_params
        ):
            return None
        return session

    async def call(
        self,
        method: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, str | None] | None = None,
    ) -> AsyncSlackResponse:
        """`method` with a JSON `body` (as the SDK sends chat.postMessage) or `params` (as it
        sends reactions.add); a None value is left out, as the SDK's methods leave it out."""
        sent = None if body is None else {k: v for k, v in body.items() if v is not None}
        query = None if params is None else {k: v for k, v in params.items() if v is not None}
        session = self._straight()
        if session is None:
            return await self._client.api_call(method, json=sent, params=query)
        url, headers = self._prepare(method, sent is not None)
        async with session.request(
            "POST", url, json=sent, params=query, headers=headers
        ) as response:
            data = await _read(response)
            status, got = response.status, response.headers
        req_args = {"headers": headers, "json": sent, "params": query}
        checked: AsyncSlackResponse = AsyncSlackResponse(
            client=self._client,
            http_verb="POST",
            api_url=url,
            req_args=req_args,
            data=data,  # type: ignore[arg-type]  # text, as the SDK gives it too
            headers=got,  # type: ignore[arg-type]
            status_code=status,
        ).validate()  # type: ignore[no-untyped-call]
        return checked

    def _prepare(self, method: str, has_json: bool) -> tuple[str, dict[str, str]]:
        prepared = self._prepared.get((method, has_json))
        if prepared is None:
            client = self._client
            args = _build_req_args(
                token=client.token,
                http_verb="POST",
                files=None,  # type: ignore[arg-type]
                data=None,  # type: ignore[arg-type]
                default_params={},
                params=None,  # type: ignore[arg-type]
                json={} if has_json else None,  # type: ignore[arg-type]
                headers=dict(client.headers),
                auth=None,  # type: ignore[arg-type]
                ssl=None,
                proxy=None,
            )
            prepared = _get_url(client.base_url, method), args["headers"]
            self._prepared[(method, has_json)] = prepared
        return prepared


async def _read(response: aiohttp.ClientResponse) -> dict[str, Any] | bytes | str:
    """The response's data, as `_request_with_session` reads it: its JSON; bytes or text where
    it says it is those; none when it is anything else; a `SlackApiError` when it says JSON
    and is not."""
    if response.content_type == "application/gzip":
        return await response.read()
    if response.content_type == "text/plain":
        return await response.text()
    try:
        data: dict[str, Any] = await response.json()
    except aiohttp.ContentTypeError:
        return {}
    except json.JSONDecodeError:
        try:
            text = await response.text()
            message = _build_unexpected_body_error_message(text)
            raise SlackApiError(message, response)  # type: ignore[no-untyped-call]
        except Exception as exc:
            failed = f"Unexpectedly failed to read the response body: {exc}"
            raise SlackApiError(failed, response) from None  # type: ignore[no-untyped-call]
    return data
