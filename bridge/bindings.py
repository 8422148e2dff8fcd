"""Which agent answers in a conversation, and whether a message in a group or channel is for
it: the admin's bindings and `respond_to` (config/bindings.py) applied to a route."""

from __future__ import annotations

from collections.abc import Collection

from bridge.types import InboundChat, Route
from config.bindings import BindingConfig, RespondTo
from config.schema import WorkspaceConfig

DEFAULT_RESPOND_TO: tuple[RespondTo, ...] = ("all",)


def binding_for(workspace: WorkspaceConfig, route: Route, *, direct: bool) -> BindingConfig | None:
    """The most specific binding of the conversation: a forum topic's over its chat's, a DM
    binding of the platform over one for every platform's DMs."""
    best: tuple[int, BindingConfig] | None = None
    for binding in workspace.bindings:
        place = binding.place
        if place.platform not in (None, route.platform):
            continue
        if place.conversation is None:
            if not direct:
                continue
            rank = 1 if place.platform is None else 2
        elif place.conversation != route.conversation_id:
            continue
        elif place.thread is None:
            rank = 3
        elif place.thread == route.thread_id:
            rank = 4
        else:
            continue
        if best is None or rank > best[0]:
            best = (rank, binding)
    return best[1] if best else None


def agent_for(workspace: WorkspaceConfig, route: Route, *, direct: bool) -> str:
    binding = binding_for(workspace, route, direct=direct)
    return binding.agent if binding else workspace.default_agent


def respond_to(workspace: WorkspaceConfig, route: Route) -> Collection[RespondTo]:
    """What an operator's message in this group conversation must be for the agent to take
    it: the topic's or chat's binding says, else the workspace, else every message."""
    chat = route.model_copy(update={"thread_id": None})
    for place in (route, chat):
        binding = binding_for(workspace, place, direct=False)
        if binding is not None and binding.respond_to is not None:
            return binding.respond_to
    return workspace.respond_to or DEFAULT_RESPOND_TO


def names_the_bot(chat: InboundChat, *, in_agent_thread: bool) -> bool:
    """The message speaks to the bot itself: mentions it, or replies to it (a reply to one of
    its messages, or one in a thread where the agent has a session)."""
    return chat.mentions_bot or replies_to_the_bot(chat, in_agent_thread=in_agent_thread)


def replies_to_the_bot(chat: InboundChat, *, in_agent_thread: bool) -> bool:
    return chat.replies_to_bot or (chat.thread_reply and in_agent_thread)


def addressed(chat: InboundChat, wanted: Collection[RespondTo], *, in_agent_thread: bool) -> bool:
    """Whether an operator's group message is addressed the way the admin asks."""
    if "all" in wanted:
        return True
    if "mention" in wanted and chat.mentions_bot:
        return True
    return "reply" in wanted and replies_to_the_bot(chat, in_agent_thread=in_agent_thread)
