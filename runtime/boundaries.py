"""The safe points: the only places an operator message may enter a running turn (DESIGN §2)."""

from __future__ import annotations

from enum import StrEnum


class Boundary(StrEnum):
    BEFORE_PROVIDER_REQUEST = "before_provider_request"
    AFTER_PROVIDER_ROUND = "after_provider_round"
    BEFORE_TOOL_EXECUTION = "before_tool_execution"
    AFTER_TOOL_RESULTS = "after_tool_results"
    BEFORE_COMPACTION = "before_compaction"
    AFTER_COMPACTION = "after_compaction"
