"""Each kind of session by its name (bridge/session_names.py), as every list shows it: a
trigger's, a schedule's fresh runs told apart by when they started, a session of no
conversation, a child of a child; and the order a list puts them in."""

from __future__ import annotations

from datetime import UTC, datetime

from bridge.session_names import name_sessions, ordered
from bridge.store.records import ConversationName
from runtime.records import AgentProfile, SessionRecord

DEC_3 = datetime(2026, 12, 3, 14, 2, tzinfo=UTC).timestamp()
KEY = "slack:acme:C1"


def session(id: str, at: float, parent: str | None = None, **metadata: str) -> SessionRecord:
    profile = AgentProfile.PRIVATE_CHILD if parent else AgentProfile.DEFAULT
    agent = "acme/assistant/child-1" if parent else "acme/assistant"
    return SessionRecord(id, agent, profile, at, parent_session_id=parent, metadata=metadata)


def test_every_kind_of_session_by_its_name() -> None:
    ops = ConversationName(KEY, "acme", False, "#ops", "Bob", "bob")
    records = [
        session("a", DEC_3, conversation_key=KEY),
        session("b", DEC_3 + 60, trigger="deploy"),
        session("c", DEC_3 + 120, schedule="pulse"),
        session("d", DEC_3 + 3_600, schedule="pulse"),
        session("e", DEC_3 + 7_200),
        session("f", DEC_3 + 7_260, "a"),
        session("g", DEC_3 + 7_320, "f"),
    ]
    tasks = {"f": "  find\nthe   flaky test", "g": "x" * 100}
    names = {k: n.full for k, n in name_sessions(records, {KEY: ops}, tasks).items()}
    assert names == {
        "a": "Slack, #ops (Bob)",
        "b": "trigger `deploy`",
        "c": "schedule `pulse`, started 3 Dec 14:04",
        "d": "schedule `pulse`, started 3 Dec 15:02",
        "e": "no conversation, started 3 Dec 16:02",
        "f": "child of Slack, #ops (Bob): find the flaky test",
        "g": f"child of child of Slack, #ops (Bob): find the flaky test: {'x' * 59}\u2026",
    }


def test_a_list_puts_the_current_session_first_and_children_after_their_parent() -> None:
    first = session("first", DEC_3, conversation_key=KEY)
    other = session("other", DEC_3 + 10, conversation_key="slack:acme:C2")
    second = session("second", DEC_3 + 20, conversation_key=KEY)
    child = session("child", DEC_3 + 30, "first")
    third = session("third", DEC_3 + 40, conversation_key=KEY)
    listed = [r.id for r in ordered([third, child, other, second, first])]
    assert listed == ["third", "second", "first", "child", "other"]
    names = name_sessions([first, other, second, child, third], {})
    assert names["third"].full == "Slack, chat C1, since 3 Dec 14:02"
    assert names["second"].full == "Slack, chat C1, 3 Dec 14:02 to 14:02, ended by /new"
    assert names["other"].full == "Slack, chat C2"
