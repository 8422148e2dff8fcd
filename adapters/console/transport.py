"""What the bridge says in the terminal: replies, notifications and progress, printed."""

from __future__ import annotations

from typing import TextIO

from adapters.console.profile import CONSOLE
from bridge import texts
from bridge.platform import PlatformProfile
from bridge.transport import Budget, Post, ProgressView
from bridge.types import DeliveryKind, Route

PREFIX = {
    DeliveryKind.TURN_RESULT: "agent> ",
    DeliveryKind.NOTIFICATION: "notice> ",
    DeliveryKind.APPROVAL: "approve?> ",
    DeliveryKind.COMMAND_REPLY: "switchboard> ",
    DeliveryKind.PROGRESS: "... ",
}


class Screen:
    """Where the console prints. While the line editor runs, `out` is its proxy, which prints
    above the line being typed and draws that line again below."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def print(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()


class ConsoleTransport:
    """Replies and notifications as labelled lines; every step and note of a running turn as
    a line of its own, in order (`ProgressLog`: a terminal has no rate limit)."""

    profile: PlatformProfile = CONSOLE

    def __init__(self, out: TextIO) -> None:
        self.screen = Screen(out)
        # conversation -> the turns whose progress shows there, not yet cleared, oldest first
        self._runs: dict[str, list[str]] = {}

    def running(self, route: Route) -> str | None:
        """The run working for this conversation now, if any: the newest whose progress
        shows. Known from its first printed line on (the line and this notion come together,
        so a Ctrl-C the operator presses once they see it stops that turn), not from the
        bridge's paced view of it, which waits for the turn before it to clear."""
        runs = self._runs.get(route.conversation_key)
        return runs[-1] if runs else None

    async def send(self, post: Post) -> str | None:
        kind, text = post.kind, post.text
        prefix = PREFIX[kind]
        if kind is DeliveryKind.APPROVAL:
            text += texts.APPROVAL_HINT  # a terminal has no buttons: the commands answer
        elif kind is DeliveryKind.NOTIFICATION:  # nor replies: the next line typed answers
            text = text.replace(texts.REPLY_TO_ANSWER, texts.TYPE_TO_ANSWER)
            text = text.replace(texts.REPLY_GOES_TO, texts.TYPED_GOES_TO)
        indent = " " * len(prefix)
        self.screen.print(prefix + text.replace("\n", "\n" + indent))
        return None  # a printed line cannot be replied to

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        return None

    def log_progress(self, route: Route, view: ProgressView) -> None:
        self._started(route, view.run_id)
        if view.note is not None:
            self.screen.print(f"    {view.note}")
        else:
            self.screen.print(f"    ... {view.step} ({view.elapsed_s:.1f}s)")

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        """Nothing to print (`log_progress` printed every line): whether a turn runs here. The
        bridge clears the turns of a conversation one by one, in the order they started, each
        once (this takes nothing from the budget: no clear is refused and tried again), so a
        clear is the oldest turn's, even when it comes after the next turn's first line."""
        key = route.conversation_key
        if view is not None:
            self._started(route, view.run_id)
        elif runs := self._runs.get(key):
            runs.pop(0)
            if not runs:
                del self._runs[key]

    def _started(self, route: Route, run_id: str) -> None:
        runs = self._runs.setdefault(route.conversation_key, [])
        if run_id not in runs:
            runs.append(run_id)
