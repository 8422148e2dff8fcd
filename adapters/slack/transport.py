"""Posting to one Slack workspace: replies, the progress message with its Stop button, the
status line, reactions, and looking up whether a post whose outcome was unknown landed.

Every reply carries message metadata naming its delivery intent and chunk, so a timed-out
`chat.postMessage` can be looked up in the conversation before the bridge sends it again.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import SECTION_TEXT, message_blocks, progress_blocks
from adapters.slack.markup import escape
from adapters.slack.platform import SLACK
from adapters.slack.straight import StraightCalls
from adapters.slack.stream import SlackStreams, within
from bridge import texts
from bridge.platform import PlatformProfile
from bridge.preview import tail
from bridge.transport import UNLIMITED, Budget, Call, DeliveryError, Post, ProgressView
from bridge.types import Quoted, Route

log = logging.getLogger(__name__)

METADATA_EVENT = "switchboard_delivery"
RECEIVED, FINISHED = "eyes", "white_check_mark"
# The conversation is gone for this bot: stop using the route until someone writes from it.
ROUTE_GONE = {"channel_not_found", "not_in_channel", "is_archived", "user_disabled"}
LOOKUP_PAGES = 10
PREVIEW_CHARS = 2500  # of the answer's markdown, at most, in the progress message


class SlackTransport:
    profile: PlatformProfile = SLACK

    def __init__(self, client: AsyncWebClient, workspace_id: str) -> None:
        self._client = client
        self._calls = StraightCalls(client)  # a reply and the reactions: every turn's calls
        self._workspace_id = workspace_id
        self._progress: dict[str, tuple[str, str]] = {}  # conversation -> (ts, text shown)
        self._status: dict[str, str] = {}  # conversation -> status line shown
        self._no_status: set[str] = set()  # conversations where Slack refused a status line
        self._unmarked: set[tuple[str, str]] = set()  # eyes taken off, check mark not yet on
        self.bot_id: str | None = None  # this app's bot id, once `auth.test` said it
        self._streams = SlackStreams(client)

    async def send(self, post: Post) -> str | None:
        route, chunk = post.route, post.chunk
        try:
            posted = await self._calls.call(
                "chat.postMessage",
                body={
                    "channel": route.conversation_id,
                    "thread_ts": route.thread_id,
                    "text": post.text,
                    "blocks": message_blocks(post),
                    "unfurl_links": False,
                    "unfurl_media": False,
                    "metadata": {
                        "event_type": METADATA_EVENT,
                        "event_payload": {"intent_id": post.intent_id, "chunk": chunk},
                    },
                },
            )
            # The channel Slack posted in: a DM's id when the route names a user.
            return f"{posted['channel']}:{posted['ts']}"
        except SlackApiError as exc:
            raise _delivery_error(exc) from exc
        except TimeoutError as exc:
            raise DeliveryError("Slack timed out", retryable=True, landed="unknown") from exc
        except aiohttp.ClientConnectorError as exc:
            raise DeliveryError(f"Slack unreachable: {exc}", retryable=True) from exc
        except aiohttp.ClientError as exc:
            raise DeliveryError(
                f"Slack connection failed: {exc}", retryable=True, landed="unknown"
            ) from exc

    async def rewrite(self, post: Post, message_id: str) -> None:
        """The bot's message `channel:ts` shows `post` now, its text and buttons
        (`chat.update`); one Slack cannot find or update is a failure not retried (the
        bridge posts it anew)."""
        channel, _, ts = message_id.partition(":")
        blocks = message_blocks(post) or []
        try:
            await self._client.chat_update(channel=channel, ts=ts, text=post.text, blocks=blocks)
        except SlackApiError as exc:
            raise _delivery_error(exc) from exc
        except TimeoutError as exc:
            raise DeliveryError("Slack timed out", retryable=True, landed="unknown") from exc
        except aiohttp.ClientError as exc:
            raise DeliveryError(f"Slack unreachable: {exc}", retryable=True) from exc

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        """Look for the post in the thread (or the channel's recent history) by its metadata.
        None when Slack cannot be asked (no history scope, unreachable)."""
        cursor = None
        try:
            for _ in range(LOOKUP_PAGES):
                if route.thread_id:
                    page = await self._client.conversations_replies(
                        channel=route.conversation_id,
                        ts=route.thread_id,
                        include_all_metadata=True,
                        limit=200,
                        cursor=cursor,
                    )
                else:
                    page = await self._client.conversations_history(
                        channel=route.conversation_id,
                        include_all_metadata=True,
                        limit=200,
                        cursor=cursor,
                    )
                for message in page.get("messages") or []:
                    if _carries(message, intent_id, chunk):
                        return True
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    return False
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            log.warning(
                "cannot look up a post", extra={"delivery_id": intent_id, "error": str(exc)}
            )
        return None

    async def thread_context(self, route: Route, limit: int) -> list[Quoted]:
        """The thread's messages before the operator's, oldest first: one page of
        `conversations.replies` (at most `limit`, from the thread's start)."""
        if not route.thread_id:
            return []
        try:
            page = await self._client.conversations_replies(
                channel=route.conversation_id, ts=route.thread_id, limit=limit
            )
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            log.warning(
                "cannot read the thread for context",
                extra={"conversation": route.conversation_key, "error": str(exc)},
            )
            return []
        until = float(route.reply_to) if route.reply_to else float("inf")
        before = [m for m in page.get("messages") or [] if m.get("text") and float(m["ts"]) < until]
        return [self._quoted(m) for m in before]

    def _quoted(self, message: dict[str, Any]) -> Quoted:
        user = message.get("user")
        return Quoted(
            text=str(message["text"]),
            author_id=user,
            author_name=(message.get("user_profile") or {}).get("display_name") or user,
            by_bot=bool(message.get("bot_id")) and message.get("bot_id") == self.bot_id,
        )

    async def received(self, route: Route) -> None:
        """A reaction on the operator's message: the agent has it."""
        if route.reply_to:
            await self._react("reactions.add", route, RECEIVED, UNLIMITED)

    async def suggest_prompts(
        self, channel: str, thread_ts: str, prompts: list[dict[str, str]]
    ) -> None:
        """Suggested prompts under a new assistant thread. Best effort: a workspace or app
        without the assistant feature refuses, and the thread works without them."""
        try:
            await self._client.assistant_threads_setSuggestedPrompts(
                channel_id=channel, thread_ts=thread_ts, prompts=prompts
            )
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            log.info(
                "suggested prompts not shown",
                extra={"workspace": self._workspace_id, "channel": channel, "error": str(exc)},
            )

    def live_messages(self, route: Route) -> frozenset[str]:
        shown = self._progress.get(route.conversation_key)
        streamed = self._streams.live(route)
        return frozenset(ts for ts in (shown[0] if shown else None, streamed) if ts)

    async def remove_live(self, route: Route, message_id: str) -> None:
        try:
            await self._client.chat_delete(channel=route.conversation_id, ts=message_id)
        except SlackApiError as exc:  # gone already
            log.info("left-over progress not deleted", extra={"error": exc.response.get("error")})

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        """The progress message with its Stop button; the answer so far streamed beside it
        (an assistant thread) or in it (elsewhere); a stopped answer left in it, marked."""
        key = route.conversation_key
        try:
            if view is None:
                await self._clear(route, budget)
            else:
                await self._show(route, view, budget)
        except SlackApiError as exc:
            if exc.response.get("error") == "message_not_found":
                self._progress.pop(key, None)  # someone deleted it: post a new one next time
            log.info("progress not shown", extra={"conversation": key, "error": str(exc)})
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.info("progress not shown", extra={"conversation": key, "error": str(exc)})

    async def _show(self, route: Route, view: ProgressView, budget: Budget) -> None:
        if view.stopped and self._streams.live(route):
            # The partial answer stays in its stream, which says it was stopped; the
            # progress message goes, as the bridge clears it next.
            await self._streams.stop(route, f"\n\n_{texts.STREAM_STOPPED}_", budget)
            return
        answer = view.answer if view.answer.strip() else ""
        streams = answer and not view.stopped and self._streams.can(route)
        if streams and await self._streams.show(route, answer, budget):
            answer = ""  # shown in the stream, not in the progress message
        if not view.stopped:
            await self._status_line(route, f"is working: {view.step}", budget)
        status = _progress_status(view)
        text = f"{_preview(answer, len(status) + 2)}\n\n{status}" if answer else status
        await self._post_or_edit(route, text, progress_blocks(text, stop=not view.stopped), budget)
        key = route.conversation_key
        if view.stopped and self._progress.get(key, ("", ""))[1] == text:
            del self._progress[key]  # the stopped answer stays: not ours to clear

    async def _post_or_edit(
        self, route: Route, text: str, blocks: list[dict[str, Any]], budget: Budget
    ) -> None:
        """The progress message posted, or edited when its text changed."""
        key = route.conversation_key
        shown = self._progress.get(key)
        if shown is None:
            posted = await self._within(
                budget,
                Call.POST,
                lambda: self._client.chat_postMessage(
                    channel=route.conversation_id,
                    thread_ts=route.thread_id,
                    text=text,
                    blocks=blocks,
                ),
            )
            if posted is not None:
                self._progress[key] = (str(posted["ts"]), text)
                await budget.posted()
        elif shown[1] != text:
            ts = shown[0]
            updated = await self._within(
                budget,
                Call.EDIT,
                lambda: self._client.chat_update(
                    channel=route.conversation_id, ts=ts, text=text, blocks=blocks
                ),
            )
            if updated is not None:
                self._progress[key] = (ts, text)

    async def _clear(self, route: Route, budget: Budget) -> None:
        """Each step once, as the budget allows: the bridge calls again for what is left."""
        key = route.conversation_key
        if not await self._streams.remove(route, budget):
            return
        shown = self._progress.pop(key, None)
        if shown is not None:
            ts = shown[0]
            try:
                deleted = (
                    await self._within(
                        budget,
                        Call.DELETE,
                        lambda: self._client.chat_delete(channel=route.conversation_id, ts=ts),
                    )
                    is not None
                )
            except SlackApiError as exc:  # already gone, or never to be: forget it
                log.info("progress not deleted", extra={"error": exc.response.get("error")})
                deleted = True
            if not deleted:
                self._progress[key] = shown
                return
        if not await self._status_line(route, "", budget) or not route.reply_to:
            return
        mark = (route.conversation_id, route.reply_to)
        if mark not in self._unmarked:
            if not await self._react("reactions.remove", route, RECEIVED, budget):
                return
            self._unmarked.add(mark)
        if await self._react("reactions.add", route, FINISHED, budget):
            self._unmarked.discard(mark)

    async def _status_line(self, route: Route, status: str, budget: Budget) -> bool:
        """The assistant status line under the thread, where this workspace offers it. False
        when the budget had no room for it."""
        key, thread = route.conversation_key, route.thread_id
        if thread is None or key in self._no_status or self._status.get(key, "") == status:
            return True
        try:
            done = await self._within(
                budget,
                Call.INDICATOR,
                lambda: self._client.assistant_threads_setStatus(
                    channel_id=route.conversation_id, thread_ts=thread, status=status
                ),
            )
        except SlackApiError as exc:
            self._no_status.add(key)  # not an assistant thread, or no scope: the message will do
            log.info(
                "no status line here",
                extra={"conversation": key, "error": exc.response.get("error")},
            )
            return True
        if done is None:
            return False
        self._status[key] = status
        return True

    async def _react(self, method: str, route: Route, name: str, budget: Budget) -> bool:
        """False when the budget had no room for it."""
        try:
            return (
                await self._within(
                    budget,
                    Call.REACTION,
                    lambda: self._calls.call(
                        method,
                        params={
                            "channel": route.conversation_id,
                            "name": name,
                            "timestamp": route.reply_to or "",
                        },
                    ),
                )
                is not None
            )
        except SlackApiError as exc:  # already there, already gone, or no reactions scope
            log.debug("reaction skipped", extra={"error": exc.response.get("error")})
            return True

    _within = staticmethod(within)


def _delivery_error(exc: SlackApiError) -> DeliveryError:
    status = exc.response.status_code
    error = str(exc.response.get("error") or f"HTTP {status}")
    if status == 429 or error == "ratelimited":
        wait = float(exc.response.headers.get("Retry-After", 1))
        return DeliveryError(f"Slack 429: retry after {wait:g}s", retryable=True, retry_after=wait)
    if status >= 500:
        return DeliveryError(f"Slack {status}: {error}", retryable=True, landed="unknown")
    return DeliveryError(f"Slack refused: {error}", retryable=False, route_gone=error in ROUTE_GONE)


def _carries(message: dict[str, Any], intent_id: str, chunk: int) -> bool:
    metadata = message.get("metadata") or {}
    payload = metadata.get("event_payload") or {}
    return (
        metadata.get("event_type") == METADATA_EVENT
        and payload.get("intent_id") == intent_id
        and payload.get("chunk") == chunk
    )


def _progress_status(view: ProgressView) -> str:
    """The progress message's last lines: the step and its time, the note; or stopped."""
    if view.stopped:
        return escape(texts.STREAM_STOPPED)
    status = f"\u23f3 {SLACK.render(view.step)} ({view.elapsed_s:.0f}s)"
    return status + (f"\n{SLACK.render(view.note)}" if view.note else "")


def _preview(answer: str, reserve: int) -> str:
    """The newest part of the answer, in mrkdwn, with room for `reserve` more in a section."""

    def fits(markdown: str) -> bool:
        return len(SLACK.render(markdown)) + reserve <= SECTION_TEXT

    return SLACK.render(tail(answer, fits, PREVIEW_CHARS))
