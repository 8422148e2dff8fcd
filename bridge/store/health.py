"""The health lines the running process keeps (bridge migration 19), for `switchboard status`
(another process) to read: a row a subject, rewritten whole each time."""

from __future__ import annotations

from dataclasses import dataclass

from runtime.store.store import Store

UPSERT = (
    "INSERT INTO health (subject, workspace_id, ok, words, replica, checked_at)"
    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (subject) DO UPDATE SET"
    " workspace_id = excluded.workspace_id, ok = excluded.ok, words = excluded.words,"
    " replica = excluded.replica, checked_at = excluded.checked_at"
)


@dataclass(frozen=True, slots=True)
class KeptHealth:
    subject: str
    workspace_id: str | None
    ok: bool
    words: str
    replica: str | None
    checked_at: float


class HealthStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def keep(
        self, rows: list[tuple[str, str, bool, str]], replica: str | None, at: float
    ) -> None:
        """(subject, workspace, ok, words) each, as found now (the secrets the process knows
        masked: an error may quote a URL with a token in it); this replica's subjects no
        longer found go."""
        subjects = [r[0] for r in rows]
        async with self._store.write() as w:
            if rows:
                w.write_sql(
                    UPSERT,
                    [
                        (s, ws, 1 if ok else 0, w.mask(words), replica, at)
                        for s, ws, ok, words in rows
                    ],
                    many=True,
                )
            mine = "replica IS NULL" if replica is None else "replica = ?"
            marks = ", ".join("?" for _ in subjects)
            gone = f" AND subject NOT IN ({marks})" if subjects else ""
            params = ([] if replica is None else [replica]) + subjects
            w.write_sql(f"DELETE FROM health WHERE {mine}{gone}", params)

    async def of(self, workspace_id: str) -> list[KeptHealth]:
        rows = await self._store.read_sql(
            "SELECT * FROM health WHERE workspace_id = ? ORDER BY subject", (workspace_id,)
        )
        return [
            KeptHealth(
                r["subject"],
                r["workspace_id"],
                bool(r["ok"]),
                r["words"],
                r["replica"],
                r["checked_at"],
            )
            for r in rows
        ]
