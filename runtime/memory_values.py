"""The values of agent memory: scopes, sources, who may see one, a memory and its limits."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import StrEnum

from config.errors import SwitchboardError
from runtime.store import memory as stored

MAX_TEXT = 2000  # characters in one memory


class MemoryScope(StrEnum):
    OPERATOR = "operator"  # what one person told the agent; seen only in their private chats
    AGENT = "agent"  # this agent, the whole workspace


class MemorySource(StrEnum):
    OPERATOR = "operator"  # an operator's own words
    QUOTE = "quote"  # a quote or forward an operator passed on (untrusted text)
    TOOL = "tool"  # a tool's output
    EVENT = "event"  # an event's body (trigger, wake-up note)
    AGENT = "agent"  # the model's own conclusion


TRUSTED = frozenset({MemorySource.OPERATOR, MemorySource.AGENT})


@dataclass(frozen=True, slots=True)
class Audience:
    """Who a turn speaks for and to: which memories it may see and write."""

    agent_id: str  # the runtime agent id ("<workspace>/<agent>"); a child uses its root agent's
    operator_id: str | None  # the operator whose words started the turn, if any
    private: bool  # the conversation is that operator's private chat (DM, the console)

    @property
    def visible(self) -> stored.Visible:
        own = self.operator_id if self.private else None
        return stored.Visible(self.agent_id, own)


@dataclass(frozen=True, slots=True)
class Memory:
    id: str  # "mem_..."
    agent_id: str
    scope: MemoryScope
    operator_id: str | None  # whose, for OPERATOR scope
    text: str
    created_at: float  # wall clock
    session_id: str | None  # where it came from
    message_id: str | None  # the queue message (or run) it came from, if known
    source: MemorySource
    supersedes: str | None = None  # the memory this one replaces (add and supersede only)


@dataclass(frozen=True, slots=True)
class Recalled:
    memory: Memory
    score: float


class MemoryRefused(SwitchboardError):
    """A memory was not written or replaced; the message says why, in words the model can
    act on."""


def scope_for(audience: Audience, scope: MemoryScope | None) -> MemoryScope:
    """The scope asked for, or the default: the operator's own in their private chat, else
    the agent's. Refused: the operator scope anywhere others read the answer."""
    private = audience.private and audience.operator_id is not None
    if scope is None:
        return MemoryScope.OPERATOR if private else MemoryScope.AGENT
    if scope is MemoryScope.OPERATOR and not private:
        raise MemoryRefused(
            "an operator's private memory can be kept only in a private chat with them; "
            "here others read the answers. Use scope 'agent' if the whole workspace may know it."
        )
    return scope


def checked_text(text: str) -> str:
    text = text.strip()
    if not text:
        raise MemoryRefused("nothing to remember: the text is empty")
    if len(text) > MAX_TEXT:
        raise MemoryRefused(
            f"a memory holds at most {MAX_TEXT} characters (this one has {len(text)}); "
            "keep the fact itself, in fewer words, or split it into several memories"
        )
    return text


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """How many memories an agent keeps: of its own scope, and of each operator's. Keeping
    one more in a full scope removes its least used and oldest (`Kept.evicted`)."""

    agent: int = 10_000
    operator: int = 1_000

    def of(self, scope: MemoryScope) -> int:
        return self.agent if scope is MemoryScope.AGENT else self.operator


@dataclass(frozen=True, slots=True)
class Kept:
    memory: Memory
    evicted: tuple[Memory, ...] = ()  # removed to stay within the limit: tell the operator


def origin_of(session_id: str | None, message_id: str | None, text: str) -> str | None:
    """A digest of where a memory came from and what it says, kept in a forgotten memory's
    tombstone (never the text) so the same message does not teach it again."""
    if message_id is None:
        return None
    return hashlib.sha256(json.dumps([session_id, message_id, text]).encode()).hexdigest()
