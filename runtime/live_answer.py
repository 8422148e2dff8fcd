"""What a turn shows while the model answers: its words as they stream (ephemeral: the round's
final text is what is stored) and the notice of a retry or a fallback, which also tells the
presenter to drop the words shown so far (the failed attempt's are no answer)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from runtime.events import Event, Payload
from runtime.payloads import AssistantTextDelta, ProviderRetry
from runtime.store.store import Store


@dataclass(frozen=True, slots=True)
class LiveAnswer:
    store: Store
    session_id: str
    run_id: str
    emit: Callable[[Payload], Coroutine[Any, Any, None]]  # a stored event of the turn

    def text(self, delta: str) -> None:
        self._publish(AssistantTextDelta(delta=delta))

    def retry(self, attempt: int, delay: float, error: str) -> None:
        # At once, in order with the deltas; the stored notice follows in the background.
        self._publish(AssistantTextDelta(delta="", restart=True))
        notice = ProviderRetry(attempt=attempt, delay_s=delay, error=error)
        asyncio.get_running_loop().create_task(self.emit(notice))

    def _publish(self, payload: AssistantTextDelta) -> None:
        self.store.publish_ephemeral(Event(payload, self.session_id, self.run_id))
