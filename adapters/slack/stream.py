"""The answer streamed into a Slack thread with Slack's streaming methods for AI apps
(`chat.startStream`, `chat.appendStream`): one message a conversation, appended to as the
model writes, deleted when the turn ends (the outbox posts the answer itself, split and
looked up like every reply). Where Slack refuses them (an app without the assistant features,
a missing scope, a workspace without the method) the conversation falls back to the progress
message, updated with the answer so far, for the rest of this run."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters import platform_calls
from bridge.transport import Budget, Call
from bridge.types import Route

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_MARKDOWN = 12_000  # characters of markdown_text a call takes


def asked_to_wait(exc: Exception) -> float | None:
    """Slack's 429, and its Retry-After."""
    if isinstance(exc, SlackApiError) and exc.response.status_code == 429:
        return float(exc.response.headers.get("Retry-After", 1))
    return None


async def within(budget: Budget, call: Call, request: Callable[[], Awaitable[T]]) -> T | None:
    """This progress call, within the bridge's budget (`adapters/platform_calls.py`)."""
    return await platform_calls.within(budget, call, request, asked_to_wait)


class SlackStreams:
    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client
        self._open: dict[str, tuple[str, str]] = {}  # conversation -> (ts, markdown sent)
        self._refused: set[str] = set()  # conversations where Slack refused to stream

    def can(self, route: Route) -> bool:
        """A thread of the app's DM (an assistant thread), where Slack has not refused: in a
        channel a stream needs its recipient's ids, which a reply's route does not carry."""
        return (
            route.thread_id is not None
            and route.conversation_id.startswith("D")
            and route.conversation_key not in self._refused
        )

    def live(self, route: Route) -> str | None:
        opened = self._open.get(route.conversation_key)
        return opened[0] if opened else None

    async def show(self, route: Route, answer: str, budget: Budget) -> bool:
        """Stream the answer so far; False when Slack refused (stream no more here)."""
        key = route.conversation_key
        opened = self._open.get(key)
        if opened is not None and not answer.startswith(opened[1]):
            if not await self.remove(route, budget):  # a new round: a message of its own
                return True
            opened = None
        try:
            if opened is None:
                text = answer[:MAX_MARKDOWN]
                started = await within(
                    budget,
                    Call.STREAM,
                    lambda: self._client.chat_startStream(
                        channel=route.conversation_id,
                        thread_ts=route.thread_id or "",
                        markdown_text=text,
                    ),
                )
                if started is not None:
                    self._open[key] = (str(started["ts"]), text)
                    await budget.posted()
                return True
            ts, sent = opened
            more = answer[len(sent) :][:MAX_MARKDOWN]
            if not more:
                return True
            appended = await within(
                budget,
                Call.STREAM,
                lambda: self._client.chat_appendStream(
                    channel=route.conversation_id, ts=ts, markdown_text=more
                ),
            )
            if appended is not None:
                self._open[key] = (ts, sent + more)
            return True
        except SlackApiError as exc:
            error = exc.response.get("error")
            if opened is not None:  # the stream ended or went: start another next time
                self._open.pop(key, None)
                log.info("stream lost", extra={"conversation": key, "error": error})
                return True
            self._refused.add(key)
            log.info("no streaming here", extra={"conversation": key, "error": error})
            return False
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.info("stream not shown", extra={"conversation": key, "error": str(exc)})
            return True

    async def stop(self, route: Route, last_words: str, budget: Budget) -> bool:
        """End the stream with these words; it stays as it is. False when the budget had no
        room for it yet."""
        key = route.conversation_key
        opened = self._open.get(key)
        if opened is None:
            return True
        try:
            stopped = await within(
                budget,
                Call.STREAM,
                lambda: self._client.chat_stopStream(
                    channel=route.conversation_id, ts=opened[0], markdown_text=last_words
                ),
            )
            if stopped is None:
                return False
        except SlackApiError as exc:  # it ended or went already: nothing more to say in it
            log.info("stream not stopped", extra={"error": exc.response.get("error")})
        del self._open[key]
        return True

    async def remove(self, route: Route, budget: Budget) -> bool:
        """Delete the streamed message; False when the budget had no room for it yet."""
        key = route.conversation_key
        opened = self._open.get(key)
        if opened is None:
            return True
        ts = opened[0]
        try:
            deleted = await within(
                budget,
                Call.DELETE,
                lambda: self._client.chat_delete(channel=route.conversation_id, ts=ts),
            )
            if deleted is None:
                return False
        except SlackApiError as exc:  # gone already: forget it
            log.info("stream not deleted", extra={"error": exc.response.get("error")})
        del self._open[key]
        return True
