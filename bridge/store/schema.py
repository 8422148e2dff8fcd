"""The bridge's tables, kept in the runtime's database and versioned on their own."""

MIGRATIONS: list[str] = [
    """
    CREATE TABLE inbound_seen (
        dedupe_key TEXT PRIMARY KEY,
        message_id TEXT,
        seen_at REAL NOT NULL
    );

    CREATE TABLE conversations (
        conversation_key TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        route TEXT NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX conversations_session ON conversations(session_id);

    CREATE TABLE deliveries (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        conversation_key TEXT NOT NULL,
        route TEXT NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        chunks_sent INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX deliveries_open ON deliveries(status) WHERE status IN ('pending', 'sending');

    CREATE TABLE notification_routes (
        notification_id TEXT PRIMARY KEY,
        delivery_id TEXT,
        status TEXT NOT NULL
    );

    CREATE TABLE refusals (
        sender_key TEXT PRIMARY KEY,
        replied_at REAL NOT NULL
    );

    CREATE TABLE cursors (
        name TEXT PRIMARY KEY,
        seq INTEGER NOT NULL
    );
    """,
    # 2: conversations the platform refused (a blocked or removed bot).
    """
    CREATE TABLE failed_routes (
        conversation_key TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        route TEXT NOT NULL,
        reason TEXT NOT NULL,
        failed_at REAL NOT NULL
    );
    """,
    # 3: the outbox's next intent of a conversation among the open ones only, and what
    # pruning looks for by age (issue 11).
    """
    CREATE INDEX deliveries_open_conversation ON deliveries(conversation_key, seq)
        WHERE status IN ('pending', 'sending');
    CREATE INDEX deliveries_finished ON deliveries(updated_at)
        WHERE status IN ('accepted_by_transport', 'failed');
    CREATE INDEX inbound_seen_age ON inbound_seen(seen_at);
    CREATE INDEX refusals_age ON refusals(replied_at);
    """,
    # 4: messages progress shows (a progress message, a half-streamed answer), so that what
    # a crash left behind is removed on the next start (issue 12).
    """
    CREATE TABLE live_messages (
        conversation_key TEXT NOT NULL,
        message_id TEXT NOT NULL,
        route TEXT NOT NULL,
        shown_at REAL NOT NULL,
        PRIMARY KEY (conversation_key, message_id)
    );
    """,
]
