"""What an adapter provides to the bridge: sending, progress, and its limits as data."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Protocol, runtime_checkable

from bridge.platform import PlatformProfile
from bridge.types import Button, DeliveryKind, Quoted, Route, TransportLimits
from config.errors import SwitchboardError


class DeliveryError(SwitchboardError):
    """A send failed. `landed` says whether the platform may have accepted it anyway: "no"
    (the request never left: a refused connection, no free connection in the pool) is simply
    sent again; "unknown" (a 5xx, a read timeout) is looked up first where the platform can
    tell, and sent again where it cannot: a repeated part beats a lost one."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        landed: Literal["no", "unknown"] = "no",
        retry_after: float | None = None,
        route_gone: bool = False,
        held: bool = False,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        # The bot cannot send for now (a reload restarts it, or waits for a config that
        # starts it): the delivery waits, and the wait is no failed attempt.
        self.held = held
        self.landed = landed
        self.retry_after = retry_after
        self.route_gone = route_gone  # the bot was blocked or removed: stop using this route


class Call(StrEnum):
    """A platform call, as pacing sees it."""

    POST = "post"  # a new message: a part of a reply, or the progress message
    EDIT = "edit"  # the progress message changed
    DELETE = "delete"  # the progress message removed
    INDICATOR = "indicator"  # a typing action, a status line
    REACTION = "reaction"
    READ = "read"  # reading a conversation: a thread's messages, for context
    STREAM = "stream"  # the answer so far: a draft, an append to a stream, or an edit


class Scope(StrEnum):
    """Where a rule counts calls."""

    CHANNEL = "channel"  # one chat or channel, whatever its thread (`Route.channel_key`)
    GROUP = "group"  # the same, for channels the platform counts as groups
    ACCOUNT = "account"  # everything one bot sends, in one workspace


@dataclass(frozen=True, slots=True)
class Rule:
    """At most `count` of these calls in any `per_s` seconds, in each `scope`. A platform's
    limit counts a call until its answer came back (the platform counts arrivals, which we
    cannot see); a spread of our own (`limit=False`) counts it from its start."""

    calls: frozenset[Call]
    scope: Scope
    count: int
    per_s: float
    limit: bool = True


@dataclass(frozen=True, slots=True)
class Pacing(TransportLimits):
    """A platform's limits with the rules each of its calls is paced by (DESIGN §3, Delivery).
    A channel is a group when its id starts with `group_prefix` (Telegram: a negative id)."""

    rules: tuple[Rule, ...] = ()
    group_prefix: str | None = None


@dataclass(frozen=True, slots=True)
class Post:
    """One rendered chunk of a delivery, to post in `route`'s conversation: the chunk's
    number (the first carries a notification's Stop and Status buttons where the platform has
    buttons) and, on the last one, the delivery's `buttons`."""

    route: Route
    text: str
    kind: DeliveryKind
    intent_id: str
    chunk: int
    buttons: tuple[Button, ...] = ()


@dataclass(frozen=True, slots=True)
class ProgressView:
    run_id: str
    step: str
    elapsed_s: float
    note: str | None = None  # a one-off line, e.g. "your message reached the agent ..."
    answer: str = ""  # the answer streamed so far (markdown); "" before its first word
    stopped: bool = False  # the turn was stopped: show `answer` as stopped, and keep it shown


class Budget(Protocol):
    """What a progress update may spend. The bridge paces progress with the replies (one
    budget per platform) but never makes it wait: a call the budget has no room for is
    skipped, and the bridge shows the update again, newer, once there is room."""

    def take(self, call: Call) -> bool:
        """May this call be made now? True means it is counted as made."""
        ...

    def back_off(self, call: Call, seconds: float) -> None:
        """The platform answered this call with a Retry-After."""
        ...

    async def posted(self) -> None:
        """A call that posted a message progress shows (`LiveMessages`) has returned: the
        bridge records it now, before the update's next call, so that a crash later in the
        update cannot leave it behind unrecorded."""
        ...


class _Unlimited:
    def take(self, call: Call) -> bool:
        return True

    def back_off(self, call: Call, seconds: float) -> None:
        return None

    async def posted(self) -> None:
        return None


UNLIMITED: Budget = _Unlimited()  # for a call no pacer counts


@runtime_checkable
class LiveMessages(Protocol):
    """A transport whose progress posts messages a crash could leave behind (a progress
    message, a half-streamed answer): the bridge records them and removes them on restart."""

    def live_messages(self, route: Route) -> frozenset[str]:
        """The platform ids of the messages progress shows in this conversation now."""
        ...

    async def remove_live(self, route: Route, message_id: str) -> None:
        """Delete one such message left by an earlier run (gone already is fine)."""
        ...


@runtime_checkable
class ProgressLog(Protocol):
    """A transport that prints progress as lines, with no rate limit (a terminal): it is told
    every step and every note at once, in order, where a paced view shows only the newest
    state. Its `show_progress` still gets the paced views (and the clear)."""

    def log_progress(self, route: Route, view: ProgressView) -> None:
        """Print one step (`view.note` None) or one note; no platform call, no waiting."""
        ...


class Transport(Protocol):
    profile: PlatformProfile  # the platform's facts: its name, limits, markup

    async def send(self, post: Post) -> str | None:
        """Post one rendered chunk; the id of the posted message, unique in its workspace
        (qualified by its chat where the platform's ids are not: Telegram
        `<chat_id>:<message_id>`, Slack `<channel>:<ts>`), or None where there is none. It is
        kept so a reply to that message can be matched (`InboundChat.replied_to` names a
        message the same way). A notification's first chunk carries the Stop and Status
        buttons where the platform has buttons. `buttons` (the last chunk's) go under it in
        their rows (`button_rows`), each naming its place and the post's `intent_id`: a press
        of one comes back as `InboundChat.button` and `button_of` on this message, and the
        bridge finds its command in that delivery (so a message rewritten since runs what
        was pressed). Raises DeliveryError when it did not work."""

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        """Show (or, with None, clear) the live state of a running turn, with the answer so
        far (`view.answer`) where the platform can stream it; a stopped view's partial answer
        is left shown (not cleared after). Best effort; each platform call only if
        `budget.take(call)` allows it."""

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        """Did this chunk of this intent land? Asked before re-sending one whose outcome is
        unknown (a timeout, a crash mid-send). None: this platform cannot tell."""


@runtime_checkable
class Rewriting(Protocol):
    """A transport that can rewrite one of its own messages in place (its text and buttons):
    a pressed list shows its new state where it was pressed."""

    async def rewrite(self, post: Post, message_id: str) -> None:
        """Put `post` (one rendered chunk, with its buttons, each naming `post.intent_id` as
        `send`'s do) in the place of message `message_id` (as `send` named it). A rewrite
        that changes nothing is no failure.
        Raises DeliveryError when it did not work (`retryable=False`: the message cannot be
        rewritten, and the bridge posts it anew instead)."""
        ...


@runtime_checkable
class ThreadReader(Protocol):
    """A transport that can read a thread, for the context of a message in it (Slack)."""

    async def thread_context(self, route: Route, limit: int) -> list[Quoted]:
        """The messages of `route`'s thread before `route.reply_to` (reading at most
        `limit`), oldest first. Empty when the thread cannot be read."""
        ...
