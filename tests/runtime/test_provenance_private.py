"""A message's provenance says whether it was said in the sender's private chat with the agent
(what decides which of their memories the turn may see); a message stored before that was
recorded reads as not private."""

from __future__ import annotations

from pathlib import Path

from runtime.messages import Provenance
from tests.fakes.anthropic_api import FakeAnthropic
from tests.runtime.helpers import open_runtime, operator


def test_private_is_kept_and_an_older_record_reads_as_not_private() -> None:
    said = Provenance(sender="alice", private=True)
    assert said.to_json() == {"sender": "alice", "private": True}
    assert Provenance.from_json(said.to_json()) == said
    assert Provenance.from_json({"sender": "alice"}) == Provenance(sender="alice", private=False)
    assert Provenance(sender="alice").to_json() == {"sender": "alice"}, "rows stay as they were"


async def test_a_stored_message_keeps_its_privacy(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("hi", provenance=Provenance(sender="alice", private=True)))
    await rt.submit(sid, operator("all", provenance=Provenance(sender="alice")))
    await rt.wait_idle()
    stored = await rt.store.messages(session_id=sid)
    assert [m.message.provenance.private for m in stored] == [True, False]
