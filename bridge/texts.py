"""Every sentence the bridge says to a person, in one place."""

from __future__ import annotations

from bridge.store.records import NotificationRouting
from bridge.types import DeliveryKind, DeliveryStatus
from runtime.boundaries import Boundary
from runtime.messages import QueueMode
from runtime.providers.cooldowns import State
from runtime.records import RunStatus

# Every command with its arguments and what it does: the /help text, Telegram's `/` menu and
# the Slack slash command's help are all made from this one list.
COMMANDS = {
    "stop": ("", "stop what the agent is doing now"),
    "status": ("", "what the agent is doing, its queue, undelivered notifications"),
    "queue": (" steer|followup|collect|interrupt", "how messages sent during a turn are handled"),
    "new": ("", "start a fresh session (the agent forgets this conversation)"),
    "compact": ("", "have the agent summarize the conversation so far, to free its memory"),
    "approve": (" [id]", "let the tool call waiting for your approval run"),
    "deny": (" [id]", "refuse the tool call waiting for your approval"),
    "schedules": (
        " [pause|resume|run ID | cancel WAKE-UP]",
        "the schedules and wake-ups: when they run next, how they went; steer them",
    ),
    "usage": ("", "what the agents spent today and this month, against the budgets"),
    "approve_spend": (" [run]", "let a turn a budget holds go on past its limit (this turn)"),
    "memory": (" [words]", "what the agent remembers that this chat may see; search it"),
    "forget": (" ID", "have the agent forget one of its memories (its id from /memory)"),
    "help": ("", "the list of commands"),
}
HELP = (
    "Commands:\n"
    + "".join(f"/{name}{args} - {what}\n" for name, (args, what) in COMMANDS.items())
    + "Anything else is a message to the agent."
)
SLASH_HELP = (
    "{command} followed by one of:\n{lines}\n"
    "For example: {command} queue collect. Anything you write to me that is not a command is a "
    "message to the agent."
)
COMMAND_FAILED = "That command could not run just now; please try again in a moment."
AGENT_HERE = "Agent {agent} answers here."
AGENT_REBOUND = (
    "This conversation is now bound to agent {agent}; this session keeps its agent until you "
    "send /new."
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
# /stop and /new cancel the wake-ups the agent set (pending, or due and waiting to run).
WAKEUPS_CANCELLED = "Cancelled {wakeups} the agent had set."
NOTHING_RUNNING_WAKEUPS = "Nothing was running; cancelled {wakeups} the agent had set."
WAKEUP_ONE = "1 wake-up"
WAKEUP_MANY = "{count} wake-ups"
STOPPED_BY_ADMIN = "Stopped from the admin console by {admin}."
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
# /memory and /forget (bridge/memory_chat.py): what the agent keeps across sessions.
MEMORY_NONE = (
    "The agent keeps no memories this chat may see. It keeps one when asked to remember "
    "something; what you tell it to keep for you alone shows only in your private chat."
)
MEMORY_NONE_FOUND = "No memory this chat may see matches \u201c{query}\u201d."
MEMORY_NEWEST = "The agent's newest memories this chat may see ({count}):"
MEMORY_FOUND = "Memories matching \u201c{query}\u201d ({count}):"
MEMORY_LINE = "- {id} ({scope}, {date}, {source}): {text}"
MEMORY_SCOPES = {"operator": "yours alone", "agent": "the whole workspace"}
MEMORY_SOURCES = {
    "operator": "an operator's words",
    "quote": "a quote or forward",
    "tool": "a tool's output",
    "event": "an event",
    "agent": "the agent's own conclusion",
}
MEMORY_PRIVATE_HINT = "Memories kept for you alone show only in your private chat with me."
MEMORY_FORGET_HINT = "Forget one: /forget ID, or its button."
MEMORY_FORGET_BUTTON = "Forget \u201c{text}\u201d"
FORGET_USAGE = "Usage: /forget ID (the memory's id, as /memory lists it)."
FORGOTTEN = "Forgotten: {id} (\u201c{text}\u201d). The agent no longer recalls it."
FORGET_NONE = "No memory {id} that this chat may see: nothing was forgotten."
# A full memory made room (bridge/memory_notices.py): to the workspace's primary operator.
MEMORY_FULL = (
    "\U0001f9e0 Agent {agent}'s memory {scope} is full: it keeps at most {limit:,}. To keep a "
    "new one ({kept}), it removed the least used and oldest ({count}): {ids}. Their text is gone. "
    "To keep more, raise `{setting}` under [workspaces.memory] in the config; to choose what "
    "goes instead, see the memories with /memory (or the console's Memory page) and forget "
    "some with /forget ID. (Told once a day for this memory while it stays full.)"
)
MEMORY_FULL_SCOPES = {
    "agent": "for the whole workspace",
    "operator": "of what {operator} told it to keep for them alone",
}
MEMORY_LIMIT_SETTINGS = {"agent": "agent_limit", "operator": "operator_limit"}
NEW_SESSION = "Started a fresh session; the agent no longer sees the earlier conversation."
KEEPING_MEMORIES = "It is keeping what should last of that one in its memory first."
DROPPED = "Your message \u201c{text}\u201d was dropped: {reason}."
TURN_FAILED = "The agent could not finish: {error}"
TURN_RESUMED = (
    "Switchboard restarted while the agent was working on this; it goes on now (a tool that "
    "was running then is not run again)."
)
RESUMED_ANSWER = "(Switchboard restarted while the agent worked on this; it went on.)\n\n{answer}"
INTERJECTED = "(your message reached the agent {where})"
BOUNDARY_WORDS = {
    Boundary.BEFORE_PROVIDER_REQUEST: "before its next model call",
    Boundary.AFTER_PROVIDER_ROUND: "as it was about to answer",
    Boundary.BEFORE_TOOL_EXECUTION: "as it started its tools",
    Boundary.AFTER_TOOL_RESULTS: "after its tools finished",
    Boundary.BEFORE_COMPACTION: "before it summarized the earlier conversation",
    Boundary.AFTER_COMPACTION: "after it summarized the earlier conversation",
}
# The message on its own lines: an agent's markdown may open with a code block or a list.
NOTIFICATION = "\U0001f514 {agent}:\n\n{message}"
REPLY_TO_ANSWER = "Reply to this message to answer it."
REPLY_GOES_TO = "a reply to this message goes to"
NOTIFICATION_FROM = "\n\n\u2014 raised by agent {agent}. " + REPLY_TO_ANSWER
NOTIFICATION_FROM_CHILD = (
    "\n\n\u2014 raised by {child}, a child agent of {agent}; " + REPLY_GOES_TO + " {agent}."
)
# A terminal cannot reply to a message: what is typed next goes to the same agent.
TYPE_TO_ANSWER = "Type your answer: it reaches that agent."
TYPED_GOES_TO = "what you type next goes to"
NOTIFICATION_AGENT_IDLE = (
    "Agent {agent} is not working on anything now, so there is nothing to stop."
)
NOTIFICATION_GONE = (
    "I no longer know the agent behind that notification, so I can't pass this on. Write to "
    "the agent directly instead."
)
# A press of a button whose message the bridge no longer knows (its delivery was pruned, or
# it is not this workspace's): nothing runs.
BUTTON_GONE = (
    "That button no longer works (its message is too old, or not from here), so nothing was "
    "done. Type the command instead; /help lists them."
)
SLASH_HINT = "Send {command} help for the list."
FILES_NOT_PASSED = "Not passed to the agent: {items}."
HELD_NOT_PASSED = (
    "Your message and its files could not be passed to the agent ({error}). Please send it again."
)
FILES_NOTHING_LEFT = "There was nothing else in your message, so the agent got nothing."
FILE_SKIPPED = "{name} ({why})"
FILE_KIND_NOT_READ = "the agent can't read {kind}s"
FILE_TYPE_NOT_READ = (
    "the agent reads images (JPEG, PNG, GIF, WebP), PDFs and text or code files, not {type}"
)
FILE_KIND_OFF = "{kind} files are turned off in this workspace"
FILE_TOO_LARGE = "{size}, over the {limit} limit for {kind} files"
FILE_TOO_MANY = "only {limit} files per message are passed on"
FILE_TOO_MANY_PAGES = "{pages} pages, over the {limit}-page limit"
FILE_TOO_WIDE = "{width}x{height} pixels, over the {limit}-pixel limit"
FILE_NOT_WHAT_IT_SAYS = "it is not a readable {kind} file"
FILE_UNREADABLE_TEXT = "it is not UTF-8 text"
FILE_DOWNLOAD_FAILED = "it could not be downloaded: {error}"
FILE_NO_DOWNLOADS = "this bridge cannot download files from {platform}"
STREAM_STOPPED = "\u23f9 Stopped before the answer was finished."
# Approval of a tool call (the input is a fenced JSON block: markdown to each platform).
APPROVAL_REQUEST = (
    "\U0001f510 Agent {agent} wants to run {tool}:\n\n```json\n{input}\n```\n\n"
    "It runs only if you approve; with no answer within {within} it is refused. ({id})"
)
APPROVAL_RESHOWN = "(Switchboard restarted; this call still waits for your answer.)\n\n"
APPROVAL_HINT = "\n\nAnswer /approve or /deny."
APPROVAL_APPROVED = "Approved: {tool} runs now."
APPROVAL_DENIED = "Denied: {tool} will not run; the agent is told."
APPROVAL_ALREADY = "That call was already answered: {status}{by}."
APPROVAL_STATUS_WORDS = {
    "approved": "approved",
    "denied": "denied",
    "timed_out": "no one answered in time, so it was refused",
    "cancelled": "the turn was stopped",
}
APPROVAL_TIMED_OUT = (
    "No operator answered within {within}, so {tool} was not run; the agent is told."
)
NO_APPROVAL_PENDING = "No tool call here is waiting for your approval."
NO_SUCH_APPROVAL = "I know no tool call waiting for approval as {id} in this workspace."
APPROVALS_PENDING = (
    "{count} tool calls wait for your approval here; answer one with its id, or press its "
    "button:\n{lines}"
)
APPROVAL_LINE = "/approve {id} \u2014 {tool} for agent {agent}"
# DM pairing (the code is the sender's to give to an operator; never logged).
PAIRING_CODE = (
    "You are not an operator of this Switchboard workspace yet. Your pairing code is {code}. "
    "Give it to an operator of {workspace}; once they approve it, write to me again."
)
PAIRING_REMINDER = "Your pairing request is still waiting for an operator to approve it."
PAIRING_ASK = (
    "\U0001f511 {who} asks to become an operator of {workspace} (pairing code {code}). "
    "Approve only someone you know (or answer /approve {code})."
)
PAIRING_APPROVED = "Approved: {who} is now an operator of {workspace}."
PAIRING_DENIED = "Denied: {who} will not be an operator of {workspace}."
PAIRING_WELCOME = "You are now an operator of {workspace}. Write to me to talk to the agent."
PAIRING_DECLINED = "Your pairing request for {workspace} was declined."
PAIRING_REVOKED = "You are no longer an operator of {workspace}."
PAIRING_UNKNOWN = "I know no pairing code {code} in this workspace."
PAIRING_EXPIRED = "Pairing code {code} has expired; the sender can write again for a new one."
PAIRING_ANSWERED = "That pairing request was already answered: {status} by {by}."
PAIRING_NOT_PAIRED = "{user} on {platform} is not paired with this workspace."
PAIRING_REVOKED_BY = "Revoked: {who} is no longer an operator of {workspace}."

# -- What things are doing, in words: every internal status is named here, once -----------
RUN_STATUS_WORDS = {
    RunStatus.RUNNING: "running",
    RunStatus.COMPLETED: "finished",
    RunStatus.FAILED: "ended with an error",
    RunStatus.STOPPED: "stopped",
    RunStatus.INTERRUPTED: "cut short by a restart",
}
DELIVERY_STATUS_WORDS = {
    DeliveryStatus.PENDING: "waiting to be sent",
    DeliveryStatus.SENDING: "being sent",
    DeliveryStatus.ACCEPTED_BY_TRANSPORT: "delivered",
    DeliveryStatus.FAILED: "could not be delivered",
}
DELIVERY_KIND_WORDS = {
    DeliveryKind.TURN_RESULT: "answer",
    DeliveryKind.NOTIFICATION: "notification",
    DeliveryKind.APPROVAL: "approval request",
    DeliveryKind.PROGRESS: "progress note",
    DeliveryKind.COMMAND_REPLY: "reply to a command",
}
QUEUE_MODE_WORDS = {
    QueueMode.STEER: "a message sent during a turn reaches the agent at its next step",
    QueueMode.FOLLOWUP: "each message gets a turn of its own, after the one running",
    QueueMode.COLLECT: "messages sent during a turn are answered together after it",
    QueueMode.INTERRUPT: "a new message stops the running turn and starts a fresh one",
}
NOT_ROUTED_YET = "not routed yet"  # a notification the dispatcher has not reached yet
UNDELIVERED_WORDS = {
    NOT_ROUTED_YET: "not sent yet",
    NotificationRouting.UNROUTABLE: "no operator to send it to",
    DeliveryStatus.FAILED: "its delivery failed",
}
DOING_THINKING = "thinking (model call)"
DOING_TOOL = "running tool `{tool}`"
DOING_APPROVAL = "waiting for {whom} to approve `{tool}`"  # no possessive: any id reads right
APPROVER_YOU = "you"
APPROVER_NAMED = "{who}"
APPROVER_ANY = "an operator"
DOING_CHILD = "waiting for its child agent {child}"
DOING_QUEUED = "queued, about to start"
DOING_INTERRUPTED = "stopped mid-turn when Switchboard stopped; it goes on at the next start"
DOING_QUEUED_STOPPED = "queued; it starts when Switchboard starts"
DOING_IDLE = "idle"
FOR = "{what} for {duration}"
QUEUED_COUNT = "{count} queued"
PLACE_NONE = "no conversation"
PLACE_DM = "DM with {person}"
PLACE_CHAT = "chat {id}"
PLACE_THREAD = " (a thread)"
# A session's name (bridge/session_names.py): what started it, or a child's parent and task.
SESSION_STARTED_BY = "{kind} `{name}`"
SESSION_CHILD = "child of {parent}"
SESSION_CHILD_TASK = "child of {parent}: {task}"
SESSION_PARENT = "another session"
SESSION_STARTED = "started {at}"
SESSION_CURRENT = "since {since}"
SESSION_EARLIER = "{since} to {until}, ended by /new"
ERROR_INTERNAL = "Switchboard failed inside ({what}); its log has the details"
ERROR_MODEL_KEY = "the model API refused the key (HTTP {status}); check provider.api_key"
ERROR_MODEL_BUSY = "the model API is busy (HTTP {status}); a later message may get through"
ERROR_MODEL_FAILED = "the model API failed (HTTP {status}): {detail}"
ERROR_MODEL_UNREACHABLE = "could not reach the model API: {detail}"
# /status in chat: a few short lines, readable on a phone.
STATUS_NO_SESSION = "No session here yet: send a message to start one."
STATUS_DOING = "{agent}: {what}."
STATUS_TURN = "This turn has run for {duration}."
STATUS_QUEUE_EMPTY = "Queue: empty ({mode})."
STATUS_QUEUE = "Queue: {count} waiting ({mode})."
STATUS_MODE = "mode {mode}: {words}"
STATUS_CHILD = "Child agent {agent}: {what}."
STATUS_LAST_ERROR = "Last error: {error}."
STATUS_CANNOT_DELIVER = "Cannot deliver to {where}: {reason}"
STATUS_UNDELIVERED = "Undelivered notifications: {count}"
STATUS_UNDELIVERED_NONE = "Undelivered notifications: none."
STATUS_UNDELIVERED_LINE = "- {summary} (from {agent}; {status})"
# A session off its agent's first provider (issue 41): which one answers, and why not the first.
STATUS_ON_FALLBACK = "Model: {current}, a fallback: {primary} {state}{until}{failure}."
PROVIDER_STATE_WORDS = {
    State.READY: "answers again (this session returns to it at its next turn)",
    State.HALF_OPEN: "is due a probe (this session returns to it if it answers)",
    State.COOLING: "is rate limited",
    State.OPEN: "is overloaded or unreachable",
    State.HELD: "is out of credit or quota",
    State.DISABLED: "refused its key (until the config is reloaded)",
}
PROVIDER_UNTIL = " until {when} (in {left})"
PROVIDER_FAILURE = "; last failure: {failure}"
# The console's board: what runs, what waits for whom, what failed.
BOARD_APPROVAL = "`{tool}` for {agent} in {where}"
BOARD_ANY_OPERATOR = "an operator"
BOARD_PAIRING = "{who} on {platform} asks to become an operator"
BOARD_OPERATORS_OF = "an operator of {workspace}"
BOARD_QUEUED = "{count} message(s) for {agent} in {where}"
BOARD_BEHIND_TURN = "the running turn to end"
BOARD_NEXT_TURN = "the next turn"
BOARD_FAILED_TURN = "a turn of {agent} in {where}"
BOARD_FAILED_DELIVERY = "the {kind} to {where}"
BOARD_UNDELIVERED = "the notification \u201c{summary}\u201d from {agent}"

# From Switchboard itself to each workspace's primary operator (bridge/system_notices.py).
PROVIDER_REFUSED = (
    "The model provider {provider} refused its key ({why}). Switchboard does not try it again "
    "until the config is reloaded; agents that have a fallback use it meanwhile, the others "
    "cannot answer. Whoever holds the key: check it in the config, then reload."
)
DOORS_FAILING = (
    "Switchboard's door process (it owns port {port}: the platforms' webhooks, the console, "
    "/healthz) failed to start {failures} times in a row; the last time: {why}. It keeps "
    "trying, less and less often (at most a minute apart); Slack and Telegram retry what they "
    "could not deliver meanwhile. Whoever runs the server: see its log."
)
