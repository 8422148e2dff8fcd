"""Which workspaces' platform side this process runs: their bots (polling, Socket Mode), the
replay of what their doors stored, the dispatch of their sessions' events to chat, their
deliveries and downloads.

One process runs every workspace's. Replicas on PostgreSQL split them: a workspace is run by
the replica holding its lease, `workspace:<id>` (`adapters/server/workspace_leases.py`), so
each bot is polled in one place and the platform's rate limits are paced in one place, while
its sessions' turns run on any replica (`runtime/homes.py`). Every write of a workspace's
platform side is fenced by its lease, as a session's turn is by the session's."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from bridge.types import workspace_of_key
from runtime.records import Lease
from runtime.store.fencing import FENCE, fenced_by


def _never(workspace_id: str) -> Lease:
    """A fence no write passes: for work of a workspace no longer held here."""
    return Lease(name=f"workspace:{workspace_id}", holder="", fence=-1, expires_at=0.0)


class Placement:
    """A workspace is *held* once this replica has its lease (its fence can be used), and
    *served* once its work may start here (`serve`, when what its last holder left has been
    read again: its conversations' sessions, the progress left shown, its refused routes)."""

    def __init__(self) -> None:
        self.everything = True  # one process: every workspace's, no lease (until `split`)
        self._held: dict[str, Lease] = {}
        self._served: set[str] = set()

    def split(self) -> None:
        """Replicas: from now on only the workspaces whose lease this one holds."""
        self.everything = False

    def serves(self, workspace_id: str) -> bool:
        return self.everything or workspace_id in self._served

    def serves_key(self, conversation_key: str) -> bool:
        return self.everything or workspace_of_key(conversation_key) in self._served

    def served(self) -> list[str]:
        """The workspaces served here (none listed where every one is served)."""
        return sorted(self._served)

    def hold(self, workspace_id: str, lease: Lease) -> None:
        self._held[workspace_id] = lease

    def serve(self, workspace_id: str) -> None:
        if workspace_id in self._held:
            self._served.add(workspace_id)

    def drop(self, workspace_id: str) -> None:
        """Neither held nor served: what still runs for it here is fenced by a lease no write
        passes, and nothing new starts."""
        self._served.discard(workspace_id)
        self._held.pop(workspace_id, None)

    def lease(self, workspace_id: str) -> Lease | None:
        """Its lease, while held here."""
        return self._held.get(workspace_id)

    def context(self, workspace_id: str) -> contextvars.Context | None:
        """A context whose writes are fenced by the workspace's lease and no other, for a task
        doing its work (None where no lease is held: one process)."""
        if self.everything:
            return None
        context = contextvars.copy_context()
        context.run(FENCE.set, (self._held.get(workspace_id) or _never(workspace_id),))
        return context

    @contextlib.contextmanager
    def fenced(self, workspace_id: str) -> Iterator[None]:
        """Within it, this task's writes (and those of the tasks it starts) are fenced by the
        workspace's lease too (nothing where no lease is held: one process)."""
        if self.everything:
            yield
            return
        with fenced_by(self._held.get(workspace_id) or _never(workspace_id)):
            yield
