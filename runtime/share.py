"""How many sessions a replica may hold (`Share`), and which of them make load (`busy`): the
rule `runtime/homes.py` claims, creates and lets go by."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from runtime.session import Session


@dataclass(frozen=True, slots=True)
class Share:
    """How many sessions a replica may hold: its part of the fleet's sessions with work (those
    held and those waiting), rounded up, and never more than `most`."""

    most: int
    held_in_fleet: int = 0
    waiting: int = 0
    replicas: int = 1

    @property
    def each(self) -> int:
        fleet = self.held_in_fleet + self.waiting
        return min(self.most, max(1, math.ceil(fleet / self.replicas)))

    def with_new(self) -> Share:
        """The share once a session just created has work too."""
        return replace(self, waiting=self.waiting + 1)


def busy(session: Session) -> bool:
    """A turn under way, or work waiting for one."""
    return bool(session.tasks or len(session.queue) or session.running)
