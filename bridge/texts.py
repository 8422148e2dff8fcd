"""Every sentence the bridge says to a person, in one place."""

from __future__ import annotations

from runtime import Boundary

HELP = (
    "Commands:\n"
    "/stop - stop what the agent is doing now\n"
    "/status - what the agent is doing, its queue, undelivered notifications\n"
    "/queue steer|followup|collect|interrupt - how messages sent during a turn are handled\n"
    "/new - start a fresh session (the agent forgets this conversation)\n"
    "/compact - have the agent summarize the conversation so far, to free its memory\n"
    "/help - this list\n"
    "Anything else is a message to the agent."
)
NOT_AN_OPERATOR = (
    "You are not an operator of this Switchboard workspace, so I can't pass your message "
    "to the agent. Ask an admin to add you to the workspace's operators."
)
NOT_ALLOWED_HERE = (
    "I don't take instructions in this conversation. Talk to me in a direct message, or ask "
    "an admin to add this chat to the workspace's allowed chats or channels."
)
NOT_TEXT = "I can only read text messages; your {kind} was not passed to the agent."
EMPTY = "Your message was empty, so there was nothing to pass to the agent."
TRUNCATED = (
    "Your message was {length:,} characters long; the agent reads at most {limit:,}, so I "
    "passed the first {limit:,} and left out the rest."
)
UNKNOWN_COMMAND = "I don't know the command {command}. {help_hint}"
HELP_HINT = "Send /help for the list."
QUEUE_USAGE = "Usage: /queue steer|followup|collect|interrupt (now: {mode})."
QUEUE_SET = "Queue mode for this conversation is now {mode}."
NOTHING_TO_STOP = "Nothing is running, so there is nothing to stop."
STOPPED = "Stopped."
ALREADY_STOPPED = "That turn was already stopped."
NOTHING_TO_COMPACT = "There is no conversation here yet, so there is nothing to compact."
TOO_SHORT_TO_COMPACT = "The conversation is still too short to summarize."
COMPACTING = "Summarizing the conversation so far; I'll say when it's done."
COMPACT_NEXT_STEP = "The agent will summarize the conversation so far before its next step."
COMPACTED = (
    "Summarized {rows} earlier messages; the agent's context is now about {tokens:,} tokens."
)
COMPACTED_FALLBACK = (
    "The summary could not be written ({error}); {rows} earlier messages were left out of the "
    "agent's context instead."
)
COMPACTED_NOTE = "(summarized the earlier conversation to stay within the model's memory)"
CONTEXT_USE = "Context: about {tokens:,} of {window:,} tokens ({share:.0%})."
CONTEXT_UNKNOWN = "Context: not measured yet ({window:,}-token window)."
NEW_SESSION = "Started a fresh session; the agent no longer sees the earlier conversation."
DROPPED = "Your message \u201c{text}\u201d was dropped: {reason}."
TURN_FAILED = "The agent could not finish: {error}"
TURN_STOPPED = "Stopped; the agent did not finish its answer."
INTERJECTED = "(your message reached the agent {where})"
BOUNDARY_WORDS = {
    Boundary.BEFORE_PROVIDER_REQUEST: "before its next model call",
    Boundary.AFTER_PROVIDER_ROUND: "as it was about to answer",
    Boundary.BEFORE_TOOL_EXECUTION: "as it started its tools",
    Boundary.AFTER_TOOL_RESULTS: "after its tools finished",
    Boundary.BEFORE_COMPACTION: "before it summarized the earlier conversation",
    Boundary.AFTER_COMPACTION: "after it summarized the earlier conversation",
}
NOTIFICATION = "\U0001f514 {agent}: {message}"
STREAM_STOPPED = "\u23f9 Stopped before the answer was finished."
