"""What the console's pages show of each registered platform (`adapters/platforms.py`) in one
workspace: its connection, its operators' ids on it, where its operators are heard. The
templates loop over these and name no platform; the form fields are those `config_form.py`
reads back."""

from __future__ import annotations

from dataclasses import dataclass

from adapters.admin.config_form import allow_list_field
from adapters.platform import Platform
from adapters.platforms import platforms
from config.schema import WorkspaceConfig


@dataclass(frozen=True)
class PlatformFields:
    name: str  # "telegram": `[workspaces.telegram]`
    title: str  # "Telegram"
    connected: bool  # the workspace has its section
    facts: list[tuple[str, str]]  # its section in a few words: ("Telegram", "polling")
    masked: list[str]  # the labels of its secrets that are set: "Telegram bot token"
    operator_key: str  # the form's `op-N-<operator_key>`: "telegram_user_id"
    operator_label: str  # "Telegram user id"
    numbers: bool  # its ids are numbers
    users: list[str]  # each operator's id on it, in the workspace's order ("" for none)
    allowed_field: str  # "telegram_chats"
    allowed_label: str  # "Allowed Telegram groups (chat ids, comma-separated)"
    allowed: str  # its allow list as the form takes it back: "-100, -200"


def platform_fields(workspace: WorkspaceConfig) -> list[PlatformFields]:
    """Every registered platform's, in the order they were registered."""
    return [_fields(platform, workspace) for platform in platforms()]


def surfaces(workspace: WorkspaceConfig) -> list[str]:
    """Where its operators talk to it: its platforms by name, then the terminal chat."""
    names = sorted(p.name for p in platforms() if p.section.of(workspace) is not None)
    return [*names, *(["console"] if workspace.console else [])]


def _fields(platform: Platform, workspace: WorkspaceConfig) -> PlatformFields:
    section, page = platform.section, platform.page
    found = section.of(workspace)
    masked = [
        f"{section.title} {key.replace('_', ' ')}"
        for key in page.secrets
        if found is not None and getattr(found, key, None) is not None
    ]
    allowed = getattr(found, section.allowed, []) if found is not None else []
    return PlatformFields(
        name=platform.name,
        title=section.title,
        connected=found is not None,
        facts=page.facts(workspace),
        masked=masked,
        operator_key=section.operator_key,
        operator_label=f"{section.title} user id",
        numbers=section.numbers,
        users=[section.user(o) or "" for o in workspace.operators],
        allowed_field=allow_list_field(section),
        allowed_label=page.allowed,
        allowed=", ".join(str(item) for item in allowed),
    )
