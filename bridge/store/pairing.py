"""DM pairing's tables (issue 17): the codes given to senders who are not operators, and the
senders approved since. Reads here; writes as named operations inside a bridge transaction."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bridge.store.transaction import BridgeTx
from bridge.types import Route
from runtime.store.store import Store


class PairingStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    REVOKED = "revoked"  # approved, then taken back


@dataclass(frozen=True, slots=True)
class PairingRequest:
    code: str
    workspace_id: str
    platform: str
    sender_id: str
    sender_name: str | None
    route: Route  # the DM the code was given in, where the answer goes
    status: PairingStatus
    created_at: float
    expires_at: float
    reminded_at: float | None = None
    decided_by: str | None = None


@dataclass(frozen=True, slots=True)
class PairedSender:
    workspace_id: str
    platform: str
    sender_id: str
    sender_name: str | None
    code: str
    approved_by: str
    approved_at: float


PAIRED = "SELECT * FROM paired_senders WHERE workspace_id = ? AND platform = ? AND sender_id = ?"
# A sender's code while it is valid; a denied one counts too, so a refused sender gets no
# new code until it would have expired.
OPEN_REQUEST = (
    "SELECT * FROM pairing_requests WHERE workspace_id = ? AND platform = ? AND sender_id = ?"
    " AND status IN ('pending', 'denied') AND expires_at >= ?"
)
PENDING_IN = (
    "SELECT count(*) AS n FROM pairing_requests WHERE workspace_id = ? AND status = 'pending'"
    " AND expires_at >= ?"
)
UNANNOUNCED = "SELECT * FROM pairing_requests WHERE announced = 0"


def _request(r: Any) -> PairingRequest:
    return PairingRequest(
        code=r["code"],
        workspace_id=r["workspace_id"],
        platform=r["platform"],
        sender_id=r["sender_id"],
        sender_name=r["sender_name"],
        route=Route.model_validate(json.loads(r["route"])),
        status=PairingStatus(r["status"]),
        created_at=r["created_at"],
        expires_at=r["expires_at"],
        reminded_at=r["reminded_at"],
        decided_by=r["decided_by"],
    )


def _paired(r: Any) -> PairedSender:
    return PairedSender(
        r["workspace_id"],
        r["platform"],
        r["sender_id"],
        r["sender_name"],
        r["code"],
        r["approved_by"],
        r["approved_at"],
    )


class PairingStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def paired(self, workspace_id: str, platform: str, sender_id: str) -> PairedSender | None:
        rows = await self._store.read_sql(PAIRED, (workspace_id, platform, sender_id))
        return _paired(rows[0]) if rows else None

    async def open_request(
        self, workspace_id: str, platform: str, sender_id: str, now: float
    ) -> PairingRequest | None:
        """The sender's code while it is valid."""
        rows = await self._store.read_sql(OPEN_REQUEST, (workspace_id, platform, sender_id, now))
        return _request(rows[0]) if rows else None

    async def pending_count(self, workspace_id: str, now: float) -> int:
        rows = await self._store.read_sql(PENDING_IN, (workspace_id, now))
        return int(rows[0]["n"])

    async def request(self, code: str) -> PairingRequest | None:
        rows = await self._store.read_sql("SELECT * FROM pairing_requests WHERE code = ?", (code,))
        return _request(rows[0]) if rows else None

    async def pending(self, now: float) -> list[PairingRequest]:
        """Every valid code, oldest first (the CLI's and the console's list)."""
        rows = await self._store.read_sql(
            "SELECT * FROM pairing_requests WHERE status = 'pending' AND expires_at >= ?"
            " ORDER BY created_at",
            (now,),
        )
        return [_request(r) for r in rows]

    async def all_paired(self) -> list[PairedSender]:
        rows = await self._store.read_sql(
            "SELECT * FROM paired_senders ORDER BY workspace_id, approved_at"
        )
        return [_paired(r) for r in rows]

    async def unannounced(self) -> list[PairingRequest]:
        """Decisions the running process has not told the sender of yet (made by the CLI, or
        by a button or the console just now)."""
        return [_request(r) for r in await self._store.read_sql(UNANNOUNCED)]


def give_code(tx: BridgeTx, request: PairingRequest) -> None:
    tx.execute(
        "INSERT INTO pairing_requests (code, workspace_id, platform, sender_id, sender_name,"
        " route, status, created_at, expires_at, announced) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
        (
            request.code,
            request.workspace_id,
            request.platform,
            request.sender_id,
            request.sender_name,
            json.dumps(request.route.to_json()),
            PairingStatus.PENDING,
            request.created_at,
            request.expires_at,
        ),
    )


def reminded(tx: BridgeTx, code: str) -> None:
    tx.execute("UPDATE pairing_requests SET reminded_at = ? WHERE code = ?", (tx.now(), code))


def decide(tx: BridgeTx, request: PairingRequest, status: PairingStatus, by: str) -> None:
    """Approve or deny a pending code; an approved sender is an operator from now on. Only
    a code still pending changes, and a sender is paired only if the code is approved once
    this transaction runs: a Deny that committed first, between the caller's read and this
    write, is never overridden (the caller reads again to say who won)."""
    tx.execute(
        "UPDATE pairing_requests SET status = ?, decided_by = ?, decided_at = ?, announced = 0"
        " WHERE code = ? AND status = 'pending'",
        (status, by, tx.now(), request.code),
    )
    if status is PairingStatus.APPROVED:
        tx.execute(
            "INSERT INTO paired_senders (workspace_id, platform, sender_id, sender_name, code,"
            " approved_by, approved_at) SELECT ?, ?, ?, ?, ?, ?, ? FROM pairing_requests"
            " WHERE code = ? AND status = 'approved'"
            " ON CONFLICT (workspace_id, platform, sender_id) DO NOTHING",
            (
                request.workspace_id,
                request.platform,
                request.sender_id,
                request.sender_name,
                request.code,
                by,
                tx.now(),
                request.code,
            ),
        )


def revoke(tx: BridgeTx, paired: PairedSender, by: str) -> None:
    """The sender is no longer an operator; the code that paired them says so."""
    tx.execute(
        "DELETE FROM paired_senders WHERE workspace_id = ? AND platform = ? AND sender_id = ?",
        (paired.workspace_id, paired.platform, paired.sender_id),
    )
    tx.execute(
        "UPDATE pairing_requests SET status = ?, decided_by = ?, decided_at = ?, announced = 0"
        " WHERE code = ?",
        (PairingStatus.REVOKED, by, tx.now(), paired.code),
    )


def announced(tx: BridgeTx, code: str) -> None:
    tx.execute("UPDATE pairing_requests SET announced = 1 WHERE code = ?", (code,))
