"""A session's in-memory priority lanes, mirrored from the durable messages table."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from runtime.messages import LANE_ORDER, Priority, QueueEntry, may_interject


class SessionQueue:
    """FIFO within a lane; `interject` pops first. Lanes are created on first use."""

    __slots__ = ("_lanes",)

    def __init__(self) -> None:
        self._lanes: dict[Priority, deque[QueueEntry]] = {}

    def __len__(self) -> int:
        return sum(len(lane) for lane in self._lanes.values())

    def __iter__(self) -> Iterator[QueueEntry]:
        for priority in LANE_ORDER:
            yield from self._lanes.get(priority, ())

    def push(self, entry: QueueEntry) -> None:
        self._lanes.setdefault(entry.message.priority, deque()).append(entry)

    def push_front(self, entries: list[QueueEntry]) -> None:
        """Put entries back at the front of their lanes, keeping their order."""
        for entry in reversed(entries):
            self._lanes.setdefault(entry.message.priority, deque()).appendleft(entry)

    def pop_next(self) -> QueueEntry | None:
        for priority in LANE_ORDER:
            lane = self._lanes.get(priority)
            if lane:
                return lane.popleft()
        return None

    def pop_all(self) -> list[QueueEntry]:
        entries = list(self)
        self._lanes.clear()
        return entries

    def take_interjections(self) -> list[QueueEntry]:
        """Remove and return, in order, the entries allowed to enter a running turn."""
        lane = self._lanes.get(Priority.INTERJECT)
        if not lane:
            return []
        taken = [e for e in lane if may_interject(e.message)]
        if taken:
            self._lanes[Priority.INTERJECT] = deque(e for e in lane if not may_interject(e.message))
        return taken

    def has_interjection(self) -> bool:
        return any(may_interject(e.message) for e in self._lanes.get(Priority.INTERJECT, ()))

    def take_oldest(self) -> QueueEntry | None:
        """Remove and return the entry that arrived first, whatever its lane: the one a full
        queue drops. Taking it is one step, so no worker can start it once it is chosen."""
        heads = [lane for lane in self._lanes.values() if lane]
        if not heads:
            return None
        return min(heads, key=lambda lane: lane[0].seq).popleft()

    def remove(self, entry: QueueEntry) -> None:
        """Take `entry` out of its lane; the caller chose it from this queue in the same step
        (with no await between), so it is still here."""
        self._lanes[entry.message.priority].remove(entry)
