"""A transport that records what the bridge sends, and can fail on demand."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from adapters.telegram.platform import TelegramProfile
from bridge.platform import PlatformProfile
from bridge.transport import Budget, DeliveryError, Post, ProgressView
from bridge.types import Route, TransportLimits


@dataclass
class RecordingTransport:
    limits: TransportLimits = field(default_factory=lambda: TransportLimits(max_chars=4096))
    sent: list[Post] = field(default_factory=list)
    progress: list[ProgressView | None] = field(default_factory=list)
    fail: Callable[[int], DeliveryError | None] = lambda attempt: None
    attempts: int = 0
    landed: bool | None = None  # what `delivered` answers: None, this platform cannot tell
    lookups: list[tuple[str, int]] = field(default_factory=list)

    @property
    def profile(self) -> PlatformProfile:
        """Telegram's facts (its ids, markup, operators) with this transport's limits."""
        return TelegramProfile(limits=self.limits)

    async def send(self, post: Post) -> str | None:
        self.attempts += 1
        error = self.fail(self.attempts)
        if error is not None:
            raise error
        self.sent.append(post)
        return f"{post.route.conversation_id}:{len(self.sent)}"  # as Telegram names a message

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        self.progress.append(view)

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        self.lookups.append((intent_id, chunk))
        return self.landed
