"""What the admin's file holds of each chat platform, learned from the platform's package: its
section's model (`[workspaces.<name>]`), the key that names an operator on it
(`[[workspaces.operators]] <name>_user_id`), where its operators may talk, and what no two
workspaces may share. The config validates what it learned here (`config/learning.py` adds it
to the models) and never imports a platform."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel

Section = TypeVar("Section", bound=BaseModel, covariant=True)


@dataclass(frozen=True, slots=True)
class PlatformSection(Generic[Section]):
    name: str  # the section's key: `[workspaces.<name>]`
    title: str  # for people: "Slack"
    model: type[Section]
    operator_key: str  # the operator's id on it: `slack_user_id`
    numbers: bool  # its ids (of users, of conversations) are numbers, not strings
    allowed: str  # the section's list of the conversations its operators are heard in: "chats"
    conversation: str  # one of them, for people: "chat"
    distinct: str | None = None  # a key of the section no two workspaces may share
    topics: bool = False  # a conversation has topics a binding may name (`<name>_topic`)

    @property
    def binding_key(self) -> str:
        """A binding's key for one of its conversations: `telegram_chat`."""
        return f"{self.name}_{self.conversation}"

    @property
    def topic_key(self) -> str:
        return f"{self.name}_topic"

    def of(self, holder: BaseModel) -> Section | None:
        """The workspace's section, or None when it has none."""
        section = getattr(holder, self.name, None)
        return section if isinstance(section, self.model) else None

    def user(self, operator: BaseModel) -> str | None:
        """The operator's id on it, as a platform spells it."""
        found = getattr(operator, self.operator_key, None)
        return None if found is None else str(found)


_SECTIONS: dict[str, PlatformSection[BaseModel]] = {}


def sections() -> list[PlatformSection[BaseModel]]:
    """The platforms' sections, by name."""
    return [_SECTIONS[name] for name in sorted(_SECTIONS)]


def registered() -> list[PlatformSection[BaseModel]]:
    """The platforms' sections, in the order their platforms were registered."""
    return list(_SECTIONS.values())


def section(name: str) -> PlatformSection[BaseModel] | None:
    return _SECTIONS.get(name)


def add(found: PlatformSection[BaseModel]) -> None:
    _SECTIONS[found.name] = found


def remove(name: str) -> None:
    _SECTIONS.pop(name, None)
