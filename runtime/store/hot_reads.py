"""The runtime's reads that run per message, per turn or per delivery, each served by an index
(tests/runtime/test_query_plans.py fails on a full table scan in any of them)."""

FIRST_MESSAGE_OF_RUN = "SELECT * FROM messages WHERE run_id = ? ORDER BY seq LIMIT 1"
MESSAGES_OF_RUN = "SELECT * FROM messages WHERE run_id = ? ORDER BY seq"
LATEST_RUN = "SELECT * FROM runs WHERE session_id = ? ORDER BY started_at DESC LIMIT 1"
RUN = "SELECT * FROM runs WHERE id = ?"
LAST_ROW_OF_RUN = "SELECT id FROM transcript WHERE run_id = ? ORDER BY id DESC LIMIT 1"
EVENTS_AFTER = "SELECT * FROM events WHERE seq > ? ORDER BY seq"
EVENTS_AFTER_LIMIT = EVENTS_AFTER + " LIMIT ?"
LATEST_COMPACTION = (
    "SELECT through_row, summary FROM compactions WHERE session_id = ? ORDER BY id DESC LIMIT 1"
)
TRANSCRIPT_AFTER = (
    "SELECT id, role, blocks, source_message_ids FROM transcript"
    " WHERE session_id = ? AND id > ? ORDER BY id"
)
# Where the numbering of messages, ledger events and transcript rows stands (each an index's
# last entry).
SEQUENCES = (
    "SELECT (SELECT COALESCE(MAX(seq), 0) FROM messages) + 1 AS message,"
    " (SELECT COALESCE(MAX(seq), 0) FROM events) + 1 AS event,"
    " (SELECT COALESCE(MAX(id), 0) FROM transcript) + 1 AS transcript"
)
NOTIFICATION = "SELECT * FROM notifications WHERE notification_id = ?"
