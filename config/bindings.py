"""Which agent answers where (`[[workspaces.bindings]]`) and when it answers in groups and
channels (`respond_to`): the admin's keys, validated. The bridge applies them
(`bridge/bindings.py`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from config.platform_sections import PlatformSection, registered, section
from config.problems import Problem, did_you_mean, gather, raise_all

# When the agent takes an operator's message in a group or channel (a DM: always): a mention
# of the bot, a reply to one of its messages (or in a Slack thread it is in), or every message.
RespondTo = Literal["mention", "reply", "all"]


def no_all_with_others(respond_to: Sequence[str] | None) -> None:
    if respond_to is not None and not respond_to:
        raise ValueError('respond_to lists at least one of "mention", "reply", "all"')
    if respond_to is not None and "all" in respond_to and len(set(respond_to)) > 1:
        raise ValueError('respond_to "all" already takes every message; list it alone')


@dataclass(frozen=True, slots=True)
class Place:
    """Where a binding applies: a platform's conversation (and thread), or its DMs when
    `conversation` is None (any platform's, when `platform` is None too)."""

    platform: str | None
    conversation: str | None
    thread: str | None

    def describe(self) -> str:
        if self.conversation is None:
            return f"{self.platform} DMs" if self.platform else "DMs"
        known = section(self.platform) if self.platform else None
        kind = known.conversation if known is not None else "channel"
        topic = f" topic {self.thread}" if self.thread else ""
        return f"{self.platform} {kind} {self.conversation}{topic}"


class BindingConfig(BaseModel):
    """An agent bound to one place: a platform's conversation (`telegram_chat`,
    `slack_channel`: each platform's `binding_key`), a topic of one (`telegram_topic`), or
    direct messages (on one platform, or on any). The place must be one the admin allows. The
    platforms' keys are learned (`config/learning.py`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str
    dm: bool = False
    platform: str | None = None  # with dm: only there; a platform's name or "console"
    respond_to: list[RespondTo] | None = None  # else the workspace's

    @field_validator("respond_to", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_place(self) -> BindingConfig:
        for s in registered():
            if s.topics and getattr(self, s.topic_key) is not None and not self._names(s):
                raise ValueError(f"{s.topic_key} needs the {s.binding_key} it is a topic of")
        places = [self._names(s) for s in registered()] + [self.dm]
        if sum(places) != 1:
            keys = [
                f"{s.binding_key} (with {s.topic_key} for a forum topic)"
                if s.topics
                else s.binding_key
                for s in registered()
            ]
            raise ValueError(f"a binding names exactly one place: {', '.join(keys)}, or dm = true")
        if self.platform is not None and not self.dm:
            raise ValueError("platform is for dm = true bindings; a chat or channel names its own")
        if self.dm and self.respond_to is not None:
            raise ValueError("respond_to is for groups and channels; a DM is always answered")
        no_all_with_others(self.respond_to)
        return self

    def _names(self, s: PlatformSection[BaseModel]) -> bool:
        return getattr(self, s.binding_key, None) is not None

    @property
    def place(self) -> Place:
        for s in registered():
            if self._names(s):
                topic = getattr(self, s.topic_key) if s.topics else None
                thread = str(topic) if topic is not None else None
                return Place(s.name, str(getattr(self, s.binding_key)), thread)
        return Place(self.platform, None, None)


def check_bindings(
    bindings: list[BindingConfig],
    agent_ids: list[str],
    present: Mapping[str, BaseModel],
    *,
    console: bool,
) -> None:
    """Each binding names a known agent and an allowed place, and no place is bound twice.
    Binding does not allow a place: the allow lists (of the platforms' sections `present`)
    stay the one word on where operators may talk to the bot."""
    platforms = {*present, *(["console"] if console else [])}
    seen: dict[Place, int] = {}
    found: list[Problem | str] = []
    for i, binding in enumerate(bindings):
        at = f"bindings[{i}]"
        if binding.agent not in agent_ids:
            found.append(
                f"{at}.agent {binding.agent!r} is not one of the agents: {agent_ids}"
                f"{did_you_mean(binding.agent, agent_ids)}"
            )
        place = binding.place
        if place in seen:
            found.append(
                f"{at} binds {place.describe()} again (bindings[{seen[place]}] already does); "
                "keep one"
            )
        seen[place] = i
        if place.conversation is not None and (on := place.platform) is not None:
            found += gather(lambda: _allowed(at, binding, on, present.get(on)))  # noqa: B023
        if binding.platform is not None and binding.platform not in platforms:
            found.append(
                f"{at}.platform {binding.platform!r}: the workspace has no "
                f"[workspaces.{binding.platform}] section"
            )
    raise_all(found)


def _allowed(at: str, binding: BindingConfig, platform: str, found: BaseModel | None) -> None:
    """The binding's conversation is in its platform's allow list (`chats`, `channels`)."""
    known = section(platform)
    if known is None:
        return
    key = f"{platform}_{known.conversation}"
    value = getattr(binding, key)
    if value not in (getattr(found, known.allowed) if found is not None else []):
        raise ValueError(
            f"{at}.{key} {value!r} is not an allowed {known.conversation}: add it to "
            f"{known.allowed} under [workspaces.{platform}]"
        )
