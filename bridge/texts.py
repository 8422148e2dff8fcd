"""Every sentence the bridge says to a person, in one place."""

from __future__ import annotations

from runtime import Boundary

HELP = (
    "Commands:\n"
    "/stop - stop what the agent is doing now\n"
    "/status - what the agent is doing, its queue, undelivered notifications\n"
    "/queue steer|followup|collect|interrupt - how messages sent during a turn are handled\n"
    "/new - start a fresh session (the agent forgets this conversation)\n"
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
}
NOTIFICATION = "\U0001f514 {agent}: {message}"
