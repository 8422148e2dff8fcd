"""A turn reads its session's transcript from the store parsing only the rows recorded since
the last turn, and that read gives what a whole read gives, across a compaction too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.providers.offline import OfflineProvider
from runtime.store import store as store_module
from runtime.transcript import BLOCKS, TextBlock, Transcript, TranscriptMessage
from tests.runtime.helpers import operator


def _fields(t: Transcript) -> tuple[Any, ...]:
    return (t.rows, t.row_ids, t.sources, t.summary, t.tool_use_ids, t.files)


async def test_a_turn_parses_only_the_rows_since_the_last(
    db_path: Path, cleanup: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = await Runtime.open(db_path, provider=OfflineProvider(), agents=[AgentSpec("assistant")])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    for n in range(20):
        await rt.submit(sid, operator(f"message {n}"))
        await rt.wait_idle()
    parsed: list[object] = []
    blocks = BLOCKS

    class Counting:
        def validate_json(self, data: Any) -> Any:
            parsed.append(data)
            return blocks.validate_json(data)

    monkeypatch.setattr(store_module, "BLOCKS", Counting())
    await rt.submit(sid, operator("one more"))
    await rt.wait_idle()
    turn = len(parsed)  # the rows the last turn recorded, as the next turn reads them
    assert len(await rt.store.full_transcript(sid)) == 42
    assert turn == 2, f"a turn parsed {turn} rows of 40"


async def test_a_read_after_a_known_one_is_a_whole_read(
    db_path: Path, cleanup: list[object]
) -> None:
    rt = await Runtime.open(db_path, provider=OfflineProvider(), agents=[AgentSpec("assistant")])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    store = rt.store
    ids = []
    for n in range(4):
        async with store.write() as w:
            row = TranscriptMessage(role="user", blocks=[TextBlock(text=f"row {n}")])
            ids.append(w.append_transcript(sid, None, row, [f"msg{n}"]))
    known = await store.transcript(sid)
    assert _fields(await store.transcript(sid, known)) == _fields(await store.transcript(sid))
    async with store.write() as w:
        w.append_transcript(sid, None, TranscriptMessage(role="assistant", blocks=[]))
        w.record_compaction(sid, None, ids[2], "the first three rows", fallback=False)
    after = await store.transcript(sid, known)
    whole = await store.transcript(sid)
    assert _fields(after) == _fields(whole)
    assert whole.summary == "the first three rows" and len(whole.rows) == 2
    assert known.row_ids == ids, "the known read is left as it was"


async def test_only_the_sessions_that_ran_last_keep_their_history(
    db_path: Path, cleanup: list[object]
) -> None:
    """Memory stays bounded however many sessions there are: a session that has not run for
    a while lets its kept history go, and its next turn reads it whole."""
    rt = await Runtime.open(db_path, provider=OfflineProvider(), agents=[AgentSpec("assistant")])
    cleanup.append(rt)
    rt.warm.size = 2
    sids = [await rt.create_session("assistant") for _ in range(3)]
    for sid in [*sids, sids[0]]:
        await rt.submit(sid, operator(f"hello {sid}"))
        await rt.wait_idle()
    kept = [rt.sessions[sid].history is not None for sid in sids]
    assert kept == [True, False, True]
    assert not rt.sessions[sids[1]].prepared.kept
    await rt.submit(sids[1], operator("again"))
    await rt.wait_idle()
    rows = (await rt.store.transcript(sids[1])).rows
    assert [r.text() for r in rows] == [
        f"hello {sids[1]}",
        f"You said: hello {sids[1]}",
        "again",
        "You said: again",
    ]
