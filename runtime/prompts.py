"""How queued messages become user text in the transcript."""

from __future__ import annotations

from runtime.messages import MessageKind, QueueEntry

INTERJECTION_HEADER = "[Operator message received while this turn was in progress]"
TASK_RESULT_HEADER = "[Result from child agent"
SUMMARY_HEADER = "[Summary of the earlier conversation, compacted to fit the context window]"


def _provenance_line(entry: QueueEntry) -> str:
    p = entry.message.provenance
    parts = [f"from {p.sender or 'operator'}"]
    if p.surface or entry.message.delivery_surface:
        parts.append(f"via {p.surface or entry.message.delivery_surface}")
    parts.append(f"message {p.platform_message_ref or entry.id}")
    return "(" + ", ".join(parts) + ")"


def render_interjection(entry: QueueEntry) -> str:
    """The fixed header, then who sent it and from where, then the text."""
    return f"{INTERJECTION_HEADER}\n{_provenance_line(entry)}\n{entry.message.text}"


def render_prompt(entry: QueueEntry) -> str:
    """A message that starts (or is merged into) a turn."""
    if entry.message.kind is MessageKind.TASK_RESULT:
        child = entry.message.provenance.sender or "child"
        return f"{TASK_RESULT_HEADER} {child}]\n{entry.message.text}"
    return entry.message.text


def render_turn_input(entries: list[QueueEntry]) -> str:
    """One prompt from one or more messages (collect mode merges a backlog)."""
    if len(entries) == 1:
        return render_prompt(entries[0])
    return "\n\n".join(f"{_provenance_line(e)}\n{render_prompt(e)}" for e in entries)


def render_summary(summary: str) -> str:
    """The compacted past, as the text that opens the conversation the model sees."""
    return f"{SUMMARY_HEADER}\n{summary}"
