"""How far the ledger has been dispatched to chat, kept in the handling's own transaction so
a restart neither loses nor repeats what was handled. One process has one cursor,
`dispatch`; replicas have one for each workspace, `dispatch:<id>`, advanced by the replica
serving it, and `dispatch:-` for the events of no workspace (`bridge/dispatch.py`). Each
handler advances the cursor of the follower it runs in (a context variable: the spend and
memory notices are handled in the dispatcher's task)."""

from __future__ import annotations

from contextvars import ContextVar

from bridge.store.transaction import BridgeTx

ONE_PROCESS = "dispatch"  # also where a replica's cursors start, when they have none yet
NO_WORKSPACE = "dispatch:-"

CURSOR: ContextVar[str] = ContextVar("switchboard_dispatch_cursor", default=ONE_PROCESS)


def cursor_of(workspace_id: str | None) -> str:
    """A replica's cursor for the workspace's events (None: for those of no workspace)."""
    return NO_WORKSPACE if workspace_id is None else f"dispatch:{workspace_id}"


def advance(tx: BridgeTx, seq: int | None) -> None:
    """The ledger has been handled up to `seq` by the follower running this."""
    tx.advance_cursor(CURSOR.get(), seq)
