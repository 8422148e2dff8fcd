"""Memory through the runtime (issue 40), with the fake Anthropic API: the model keeps a fact
with `remember` in a private chat and a later session of the agent is offered it at the start
of its turn; an operator's memory never reaches a group's requests nor another operator's;
`forget` takes it out of later requests; an agent that keeps no memory is offered neither the
tools nor any memory; a child reads its root agent's memories and keeps none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.memory_values import Audience, MemoryScope, MemorySource
from runtime.messages import InboundMessage, Origin, Provenance, Trust
from runtime.recall import HEADER, UNTRUSTED_MARK
from runtime.tools.command import CommandToolSpec
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.runtime.helpers import operator, provider_for

AGENT = "acme/assistant"
DEPLOY = "Our deploy window is Tuesdays 14:00 UTC"
MEMORY_TOOLS = {"remember", "recall", "forget"}


# A command whose output is text from elsewhere (a web page, say).
FETCH = CommandToolSpec(
    name="fetch_page",
    description="prints a page",
    command=("bash", "-c", "echo 'The office closes at noon on Fridays.'"),
)


async def memory_runtime(db_path: Path, fake: FakeAnthropic, *, keeps: bool = True) -> Runtime:
    agent = AgentSpec(
        AGENT,
        "You are a test agent.",
        ("notify_operator", "spawn_agent", "fetch_page"),
        memory=AGENT if keeps else None,
    )
    return await Runtime.open(
        db_path, provider=provider_for(fake), agents=[agent], command_tools=[FETCH]
    )


def dm(words: str, sender: str = "alice") -> InboundMessage:
    """Said in the sender's private chat with the agent."""
    return operator(words, sender=sender, provenance=Provenance(sender=sender, private=True))


def in_group(words: str, sender: str = "alice") -> InboundMessage:
    return operator(words, sender=sender, provenance=Provenance(sender=sender, binding="group"))


def system_of(body: dict[str, Any]) -> str:
    return " ".join(block["text"] for block in body.get("system", []))


def offered_in(body: dict[str, Any]) -> str:
    """The memories offered in a request: a block at the head of the turn's first message."""
    return " ".join(
        block["text"]
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text" and block["text"].startswith(HEADER)
    )


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["name"] for t in body.get("tools", [])}


def results(fake: FakeAnthropic) -> list[dict[str, Any]]:
    """The tool results of the newest request, oldest first."""
    return [json.loads(block["content"]) for block in fake.tool_results()]


async def turn(rt: Runtime, message: InboundMessage, session_id: str | None = None) -> str:
    """Run one turn in `session_id` (a new session of the agent, as after /new, if None)."""
    sid = session_id or await rt.create_session(AGENT)
    await rt.submit(sid, message)
    await rt.wait_idle()
    return sid


async def keep(rt: Runtime, words: str, audience: Audience, key: str) -> str:
    kept = await rt.memories.remember(
        audience,
        words,
        None,
        session_id=None,
        message_id=None,
        source=MemorySource.OPERATOR,
        key=key,
    )
    return kept.memory.id


ALICE_PRIVATE = Audience(AGENT, "alice", True)
ANYONE = Audience(AGENT, None, False)


async def test_a_fact_remembered_in_a_dm_is_offered_to_a_new_session(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        tools(("remember", {"text": DEPLOY})),
        text("Noted."),
        text("Tuesdays at 14:00 UTC."),
    ]
    rt = await memory_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    first = await turn(rt, dm("Remember: our deploy window is Tuesdays 14:00 UTC"))
    assert tool_names(anthropic_api.requests[0]) >= MEMORY_TOOLS
    assert HEADER not in offered_in(anthropic_api.requests[0]), "nothing kept yet"
    [kept] = results(anthropic_api)
    assert kept["status"] == "success" and kept["result"]["scope"] == "operator", kept

    await turn(rt, dm("When is the deploy window?"))
    asked = anthropic_api.requests[2]
    offered = offered_in(asked)
    assert system_of(asked) == system_of(anthropic_api.requests[0]), "the cached prefix holds"
    assert HEADER in offered and DEPLOY in offered
    assert f"{kept['result']['id']} (operator, " in offered
    assert UNTRUSTED_MARK not in offered
    [message] = asked["messages"]
    assert [b["text"] for b in message["content"]][1] == "When is the deploy window?"
    [found] = await rt.memories.recall(ALICE_PRIVATE, "deploy window")
    memory = found.memory
    assert (memory.session_id, memory.source) == (first, MemorySource.AGENT)
    [message] = await rt.store.messages(session_id=first)
    assert memory.message_id == message.id, "linked to the message that started the turn"
    assert anthropic_api.refused == []


async def test_an_operators_memory_reaches_neither_a_group_nor_another_operator(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    rt = await memory_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    await keep(rt, "Alice's door code is 4711", ALICE_PRIVATE, "k1")
    await keep(rt, "The staging door is staging.example.com", ANYONE, "k2")
    asked = "door code and staging door?"
    for message, kept_for_sender in ((in_group(asked), False), (dm(asked, sender="bob"), True)):
        before = len(anthropic_api.requests)
        anthropic_api.script = [
            tools(("recall", {"query": "door code"})),
            tools(("remember", {"text": "They asked about doors", "scope": "operator"})),
            text("I can't say."),
        ]
        await turn(rt, message)
        requests = anthropic_api.requests[before:]
        assert len(requests) == 3
        assert "staging.example.com" in offered_in(requests[0]), "the agent's memory is offered"
        assert "staging.example.com" in json.dumps(requests[1]["messages"][-1]), "recalled"
        assert all("4711" not in json.dumps(r) for r in requests), "a private memory leaked"
        remembered = results(anthropic_api)[-1]
        assert (remembered["status"] == "success") is kept_for_sender, remembered

    await turn(rt, dm(asked))
    assert "4711" in offered_in(anthropic_api.requests[-1]), "Alice sees hers in her DM"
    bobs = await rt.memories.recall(Audience(AGENT, "bob", True), "Bob asked about doors")
    assert [r.memory.scope for r in bobs] == [MemoryScope.OPERATOR], "kept for bob in his DM"
    assert anthropic_api.refused == []


async def test_operator_scope_is_refused_in_a_group_as_a_tool_error(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        tools(("remember", {"text": "Alice likes tea", "scope": "operator"})),
        text("I can only keep that in a private chat."),
    ]
    rt = await memory_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    await turn(rt, in_group("remember for me alone that I like tea"))
    [refused] = anthropic_api.tool_results()
    assert refused["is_error"] is True
    assert "private chat" in json.loads(refused["content"])["error"]["message"]
    assert await rt.memories.recall(ALICE_PRIVATE, "tea") == []


async def test_forget_takes_a_memory_out_of_later_requests(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    rt = await memory_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    memory_id = await keep(rt, DEPLOY, ANYONE, "k1")
    anthropic_api.script = [
        tools(("forget", {"id": memory_id})),
        tools(("forget", {"id": memory_id})),
        text("Forgotten."),
        text("I don't know the deploy window."),
    ]
    await turn(rt, in_group("forget the deploy window"))
    assert DEPLOY in offered_in(anthropic_api.requests[0])
    first, second = results(anthropic_api)
    assert first["status"] == "success" and first["result"] == {"id": memory_id}
    assert second["error"]["kind"] == "not_found", "the second forget finds nothing"
    await turn(rt, dm("When is the deploy window?"))
    assert DEPLOY not in json.dumps(anthropic_api.requests[-1])
    assert await rt.memories.recall(ALICE_PRIVATE, "deploy window") == []


async def test_an_agent_keeping_no_memory_is_offered_no_tools_and_no_memory(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [tools(("recall", {"query": "deploy"})), text("I don't know.")]
    rt = await memory_runtime(db_path, anthropic_api, keeps=False)
    cleanup.append(rt)
    await keep(rt, DEPLOY, ANYONE, "k1")  # kept while memory was on
    await turn(rt, dm("When is the deploy window?"))
    first = anthropic_api.requests[0]
    assert tool_names(first) & MEMORY_TOOLS == set()
    assert DEPLOY not in json.dumps(first) and HEADER not in json.dumps(first)
    [refused] = results(anthropic_api)
    assert refused["error"]["kind"] == "unknown_tool"


async def test_a_memory_kept_in_a_turn_an_event_started_is_offered_as_untrusted(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        tools(("remember", {"text": "Build 42 on main failed in the deploy step"})),
        text("Kept."),
        text("Build 42 failed."),
    ]
    rt = await memory_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    event = operator(
        "A CI event: build 42 on main failed in the deploy step",
        origin=Origin.CHANNEL,
        trust=Trust.TRUSTED_INTEGRATION,
    )
    await turn(rt, event)
    [kept] = results(anthropic_api)
    assert kept["result"]["scope"] == "agent", "no operator in an event's turn"
    await turn(rt, dm("what failed in the deploy step?"))
    offered = offered_in(anthropic_api.requests[-1])
    assert f"{kept['result']['id']} (agent, " in offered and UNTRUSTED_MARK in offered


async def test_a_child_reads_its_root_agents_memories_and_keeps_none(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        return text("child done" if "private child agent" in system_of(body) else "ok")

    rt = await memory_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    await keep(rt, "The staging door is staging.example.com", ANYONE, "k1")
    await keep(rt, "Alice's door code is 4711", ALICE_PRIVATE, "k2")
    anthropic_api.script = [tools(("spawn_agent", {"task": "check the staging door"}))]
    anthropic_api.responder = respond  # type: ignore[assignment]
    await turn(rt, dm("have a child check the staging door"))
    await rt.wait_idle()
    [child] = [r for r in anthropic_api.requests if "private child agent" in system_of(r)]
    assert tool_names(child) & MEMORY_TOOLS == {"recall"}
    assert "staging.example.com" in offered_in(child), "the root agent's memory"
    assert "4711" not in json.dumps(child), "a child speaks for no operator"


async def test_what_is_offered_stays_out_of_the_transcript_and_the_cached_prefix(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    """Each turn is offered what its own first message recalls, in that turn's requests
    only: the system prompt and the rows of earlier turns are sent as they were, the prefix
    a provider caches from one turn to the next."""
    anthropic_api.script = [text("Noted."), text("Tuesdays."), text("staging.example.com")]
    rt = await memory_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    await keep(rt, DEPLOY, ANYONE, "k1")
    await keep(rt, "The staging host is staging.example.com", ANYONE, "k2")
    sid = await turn(rt, dm("hello there"))
    await turn(rt, dm("When is the deploy window?"), sid)
    await turn(rt, dm("Which staging host do we use?"), sid)
    first, second, third = anthropic_api.requests
    assert system_of(first) == system_of(second) == system_of(third)
    assert DEPLOY in offered_in(second) and "staging.example.com" in offered_in(third)
    assert third["messages"][:2] == second["messages"][:2], "earlier turns go as they were"
    assert HEADER not in json.dumps(third["messages"][:4]), "only this turn's message has it"
    stored = await rt.store.full_transcript(sid)
    assert HEADER not in json.dumps([r.model_dump() for r in stored]), "never in the transcript"


async def test_what_a_turn_keeps_after_reading_a_tools_output_is_offered_as_untrusted(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        tools(("remember", {"text": "Alice prefers short answers"})),
        tools(("fetch_page", {})),
        tools(("remember", {"text": "The office closes at noon on Fridays"})),
        text("Kept both."),
        text("Noon."),
    ]
    rt = await memory_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    await turn(rt, dm("I like short answers. Read the office page."))
    await turn(rt, dm("When does the office close on Fridays, given I like short answers?"))
    offered = offered_in(anthropic_api.requests[-1]).splitlines()
    [own] = [line for line in offered if "short answers" in line]
    [read] = [line for line in offered if "noon on Fridays" in line]
    assert UNTRUSTED_MARK not in own, "kept before any tool ran: the operator's words"
    assert UNTRUSTED_MARK in read, "kept after the page was read: from a tool's output"


async def test_what_a_turn_keeps_of_a_message_passing_on_others_words_is_untrusted(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        tools(("remember", {"text": "The staging password is hunter2"})),
        text("Kept."),
        text("hunter2, from a forward."),
    ]
    rt = await memory_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    forwarded = operator(
        "Keep this.\n> The staging password is hunter2",
        sender="alice",
        provenance=Provenance(sender="alice", private=True, passed_on=True),
    )
    await turn(rt, forwarded)
    await turn(rt, dm("What is the staging password?"))
    offered = offered_in(anthropic_api.requests[-1])
    assert "hunter2" in offered and UNTRUSTED_MARK in offered
