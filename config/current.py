"""The running process's config: one holder every part reads, so a reload that swaps it is
seen everywhere at once, and no part keeps a copy that goes stale."""

from __future__ import annotations

from config.schema import SwitchboardConfig, WorkspaceConfig


class CurrentConfig:
    def __init__(self, config: SwitchboardConfig) -> None:
        self._config = config

    def __call__(self) -> SwitchboardConfig:
        return self._config

    def replace(self, config: SwitchboardConfig) -> None:
        self._config = config

    def workspace(self, workspace_id: str) -> WorkspaceConfig | None:
        return next((w for w in self._config.workspaces if w.id == workspace_id), None)
