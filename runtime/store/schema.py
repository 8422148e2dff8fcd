"""Versioned schema migrations. Append a new entry; never edit a shipped one."""

from runtime.store.database import Migration

_MEMORIES = """
    CREATE TABLE memories (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        operator_id TEXT,
        text TEXT NOT NULL,
        created_at REAL NOT NULL,
        session_id TEXT,
        message_id TEXT,
        source TEXT NOT NULL,
        supersedes TEXT,
        superseded_by TEXT,
        key TEXT NOT NULL,
        last_used_at REAL,
        uses INTEGER NOT NULL DEFAULT 0,
        UNIQUE (agent_id, key)
    );
    CREATE TABLE memory_tombstones (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        forgotten_at REAL NOT NULL,
        forgotten_by TEXT NOT NULL
    );
"""

_MEMORY_INDEXES = """
    CREATE INDEX memories_recent ON memories(agent_id, seq);
    CREATE INDEX memories_unused ON memories(agent_id, scope, operator_id, uses, last_used_at, seq);
    ALTER TABLE memory_tombstones ADD COLUMN origin TEXT;
    CREATE INDEX memory_tombstones_origin ON memory_tombstones(agent_id, origin);
"""

MIGRATIONS: list[str | Migration] = [
    # 1: the runtime's tables.
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        profile TEXT NOT NULL,
        parent_session_id TEXT REFERENCES sessions(id),
        queue_mode TEXT,
        created_at REAL NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX sessions_parent ON sessions(parent_session_id);

    CREATE TABLE messages (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        kind TEXT NOT NULL,
        origin TEXT NOT NULL,
        trust TEXT NOT NULL,
        authority_class TEXT NOT NULL,
        priority TEXT NOT NULL,
        text TEXT NOT NULL,
        delivery_surface TEXT,
        admission_context TEXT,
        provenance TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        run_id TEXT,
        boundary TEXT
    );
    CREATE INDEX messages_pending ON messages(status) WHERE status IN ('queued', 'dequeued');
    CREATE INDEX messages_session ON messages(session_id, seq);

    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        status TEXT NOT NULL,
        model TEXT NOT NULL,
        started_at REAL NOT NULL,
        finished_at REAL,
        final_text TEXT,
        error TEXT
    );
    CREATE INDEX runs_session ON runs(session_id, started_at);
    CREATE INDEX runs_running ON runs(status) WHERE status = 'running';

    CREATE TABLE transcript (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        run_id TEXT,
        role TEXT NOT NULL,
        blocks TEXT NOT NULL,
        source_message_ids TEXT NOT NULL DEFAULT '[]'
    );
    CREATE INDEX transcript_session ON transcript(session_id, id);

    CREATE TABLE tool_calls (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        name TEXT NOT NULL,
        input TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        started_at REAL NOT NULL,
        finished_at REAL
    );
    CREATE INDEX tool_calls_running ON tool_calls(status) WHERE status = 'running';

    CREATE TABLE notifications (
        notification_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        requested_by_agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        requested_by_session_id TEXT NOT NULL,
        run_id TEXT,
        target_operator_boundary TEXT NOT NULL,
        message TEXT NOT NULL,
        summary TEXT NOT NULL,
        created_at REAL NOT NULL
    );

    CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        type TEXT NOT NULL,
        session_id TEXT,
        run_id TEXT,
        data TEXT NOT NULL,
        at REAL NOT NULL
    );
    CREATE INDEX events_session ON events(session_id, seq);
    """,
    # 2: compaction. The provider sees a session's summary, then its rows after the last one
    # the summary covers; the full transcript stays for the audit.
    """
    CREATE TABLE compactions (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        run_id TEXT,
        through_row INTEGER NOT NULL,
        summary TEXT NOT NULL,
        fallback INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX compactions_session ON compactions(session_id, id);
    """,
    # 3: the message that started a run (where its answer goes), by an index (issue 11).
    """
    CREATE INDEX messages_run ON messages(run_id, seq) WHERE run_id IS NOT NULL;
    """,
    # 4: files that came with a message (issue 12): described on the message, their bytes
    # here, stored in the transaction that stores the message; a transcript row refers to
    # them by id, so every request that carries the row carries the file.
    """
    ALTER TABLE messages ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';
    CREATE TABLE attachments (
        id TEXT PRIMARY KEY,
        message_id TEXT NOT NULL,
        data BLOB NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX attachments_message ON attachments(message_id);
    """,
    # 5: leases (issue 14): which replica runs a session's turns, or a bot's polling, until
    # when, with a fencing number that grows each time a lease changes hands.
    """
    CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        fence INTEGER NOT NULL,
        expires_at REAL NOT NULL,
        acquired_at REAL NOT NULL
    );
    CREATE INDEX leases_holder ON leases(holder, expires_at);
    """,
    # 6: operator approvals of tool calls (issue 15): asked, answered, and by whom; a pending
    # one outlives a restart, so its buttons can be shown again and the tool run once.
    """
    CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        tool_use_id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        input TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        deadline REAL NOT NULL,
        decided_by TEXT,
        decided_at REAL
    );
    CREATE INDEX approvals_pending ON approvals(status, session_id);
    """,
    # 7: the admin console pages a session's turns (issue 29): its runs in a stable order
    # (two that started at the same moment by id), and a page's tool calls and the agent's
    # rows of the transcript by their runs.
    """
    CREATE INDEX runs_page ON runs(session_id, started_at, id);
    CREATE INDEX tool_calls_run ON tool_calls(run_id, started_at);
    CREATE INDEX transcript_run ON transcript(run_id, role, id);
    """,
    # 8: wake-ups an agent scheduled for its session (issue 31): pending until they fire
    # (in the transaction that stores the message they become) or are cancelled. A message
    # may cap the model rounds of the turn it starts (a schedule's max_rounds).
    """
    CREATE TABLE wakeups (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        run_id TEXT,
        due_at REAL NOT NULL,
        note TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        reply_route TEXT,
        message_id TEXT,
        decided_by TEXT
    );
    CREATE INDEX wakeups_pending ON wakeups(status, due_at) WHERE status = 'pending';
    CREATE INDEX wakeups_session ON wakeups(session_id, due_at);
    ALTER TABLE messages ADD COLUMN max_rounds INTEGER;
    """,
    # 9: what model calls cost (issue 32): one row per call, in the transaction of its round,
    # charged to an agent and to whoever started the turn (the payer, kept on the run too so a
    # wake-up or a child's turn is charged to the same one); and the same sums per quarter of
    # an hour, agent, payer ('' for nobody) and model, added to in that transaction, which a
    # budget reads before each call: every timezone's midnight is a quarter's start.
    """
    ALTER TABLE runs ADD COLUMN payer TEXT;
    CREATE TABLE model_usage (
        at REAL NOT NULL,
        session_id TEXT NOT NULL,
        run_id TEXT,
        agent_id TEXT NOT NULL,
        payer TEXT,
        model TEXT NOT NULL,
        purpose TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        cost_usd REAL NOT NULL,
        priced INTEGER NOT NULL
    );
    CREATE INDEX model_usage_at ON model_usage(at);
    CREATE TABLE model_usage_quarters (
        quarter REAL NOT NULL,
        agent_id TEXT NOT NULL,
        payer TEXT NOT NULL,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        cost_usd REAL NOT NULL,
        calls INTEGER NOT NULL,
        PRIMARY KEY (quarter, agent_id, payer, model)
    );
    """,
    # 10: schedule_wakeup counts the wake-ups a session asked for in the last 24 hours against
    # its cap (issue 38), newest first
    """
    CREATE INDEX wakeups_asked ON wakeups(session_id, created_at);
    """,
    # 11: memory that outlives a session (issue 40): each memory with its scope, its source and
    # where it came from; a newer one names the one it replaces (which then is never recalled);
    # `key` (the tool call's id) makes a write idempotent; a forgotten one leaves only its
    # tombstone. The text index is written in the memory's own transaction: SQLite's an FTS5
    # table on the trigram tokenizer (a word is found inside a longer one, and in text that
    # does not put spaces between words), PostgreSQL's a tsvector column beside the text.
    Migration(
        sqlite=_MEMORIES
        + """
    CREATE VIRTUAL TABLE memories_index USING fts5(
        text, content='memories', content_rowid='seq', tokenize='trigram'
    );
    """,
        postgresql=_MEMORIES
        + """
    ALTER TABLE memories ADD COLUMN words tsvector
        GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED;
    CREATE INDEX memories_words ON memories USING GIN (words);
    """,
    ),
    # 12: memory listed newest first (chat's `/memory`, the console), the least used and
    # oldest found first when a scope is full, and a forgotten memory's origin (a digest of
    # the session, message and text it came from, never the text) so the same message is not
    # learned again. PostgreSQL's text index is written as each memory is (no pending list
    # that every search reads until a vacuum merges it: a memory is written once, searched often)
    Migration(
        sqlite=_MEMORY_INDEXES,
        postgresql=_MEMORY_INDEXES
        + """
    ALTER INDEX memories_words SET (fastupdate = off);
    """,
    ),
    # 13: which provider answered each model call (issue 41): the connection's config name
    # (`default`, a `[providers.<name>]` entry); NULL for the calls recorded before.
    """
    ALTER TABLE model_usage ADD COLUMN provider TEXT;
    """,
    # 14: a lease renewal updates only `expires_at`, indexed no more, in pages with room to
    # spare (PostgreSQL): each renewal an update in place, not a new row version and two index
    # entries per lease (issue 42: at 10,000 sessions, a quarter of the WAL, 4 ms, not 24).
    Migration(
        sqlite="""
    DROP INDEX leases_holder;
    CREATE INDEX leases_holder ON leases(holder);
    """,
        postgresql="""
    DROP INDEX leases_holder;
    CREATE INDEX leases_holder ON leases(holder);
    ALTER TABLE leases SET (fillfactor = 50);
    """,
    ),
    # 15: replicas number messages and transcript rows without the fleet's write lock
    # (PostgreSQL): each write transaction takes a block of numbers from this sequence
    # (`postgres.py`), past every number already written. SQLite's one process numbers them.
    Migration(
        sqlite="",
        postgresql="""
    CREATE SEQUENCE number_blocks INCREMENT BY 1024 MINVALUE 1;
    SELECT setval('number_blocks', GREATEST(
        (SELECT MAX(seq) FROM messages), (SELECT MAX(id) FROM transcript), 0) + 1, false);
    """,
    ),
    # 16: replicas find the sessions with work no replica holds (`Leases.unheld_with_work`):
    # a message that arrived for another replica's session is pending work too (issue 42).
    """
    DROP INDEX messages_pending;
    CREATE INDEX messages_pending ON messages(status, session_id)
        WHERE status IN ('arrived', 'queued', 'dequeued');
    """,
]
