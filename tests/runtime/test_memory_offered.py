"""What a turn is offered of its agent's memories, and as whom it asks (runtime/recall.py):
the block is bounded and framed as data; the audience comes from the turn's first message."""

from __future__ import annotations

from runtime.memory_values import Memory, MemoryScope, MemorySource, Recalled
from runtime.messages import InboundMessage, MessageKind, Origin, Provenance, Trust
from runtime.recall import (
    FOOTER,
    HEADER,
    OFFERED_CHARS,
    UNTRUSTED_MARK,
    audience_of,
    framed,
    source_of,
)
from tests.runtime.helpers import operator

AGENT = "acme/assistant"


def recalled(n: int, text: str, source: MemorySource = MemorySource.AGENT) -> Recalled:
    memory = Memory(
        id=f"mem_{n}",
        agent_id=AGENT,
        scope=MemoryScope.AGENT,
        operator_id=None,
        text=text,
        created_at=1_780_000_000.0 + n,
        session_id=None,
        message_id=None,
        source=source,
    )
    return Recalled(memory, 1.0)


def test_the_block_is_framed_dated_marked_and_bounded() -> None:
    block = framed(
        [
            recalled(1, "The staging host is staging.example.com"),
            recalled(2, "Deploys\nwait for   Bob", MemorySource.TOOL),
            *(recalled(n, "x" * 900) for n in range(3, 6)),
        ]
    )
    header, first, second, *rest, footer = block.split("\n")
    assert (header, footer) == (HEADER, FOOTER)
    assert first == "- mem_1 (agent, 2026-05-28): The staging host is staging.example.com"
    assert second == f"- mem_2 (agent, 2026-05-28){UNTRUSTED_MARK}: Deploys wait for Bob"
    texts = [line.partition(": ")[2] for line in (first, second, *rest)]
    assert sum(map(len, texts)) <= OFFERED_CHARS
    assert rest[-1].endswith("…"), "the last one is cut to fit"
    assert framed([]) == "", "nothing kept: nothing offered"


def test_only_a_trusted_operators_words_ask_as_that_operator() -> None:
    dm = operator("hi", provenance=Provenance(sender="alice", private=True))
    assert audience_of(AGENT, dm).operator_id == "alice"
    assert audience_of(AGENT, dm).private is True
    group = operator("hi", provenance=Provenance(sender="alice"))
    assert (audience_of(AGENT, group).operator_id, audience_of(AGENT, group).private) == (
        "alice",
        False,
    )
    for other in (
        InboundMessage("tick", MessageKind.TIMER_TICK, Origin.TIMER, Trust.UNTRUSTED_EXTERNAL),
        InboundMessage("run", MessageKind.CHANNEL_EVENT, Origin.CHANNEL, Trust.TRUSTED_SYSTEM),
        operator("spoof", trust=Trust.UNTRUSTED_EXTERNAL, provenance=dm.provenance),
        None,
    ):
        audience = audience_of(AGENT, other)
        assert (audience.agent_id, audience.operator_id, audience.private) == (AGENT, None, False)
    wake = InboundMessage("note", MessageKind.TIMER_TICK, Origin.TIMER, Trust.UNTRUSTED_EXTERNAL)
    assert source_of(wake) is MemorySource.EVENT
    assert source_of(dm) is MemorySource.AGENT
