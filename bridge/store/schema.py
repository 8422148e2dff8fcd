"""The bridge's tables, kept in the runtime's database and versioned on their own."""

from runtime.store.database import Migration

_ADMIN = """
    ALTER TABLE deliveries ADD COLUMN workspace_id TEXT;
    UPDATE deliveries SET workspace_id = {workspace};
    CREATE INDEX deliveries_workspace ON deliveries(workspace_id, seq)
        WHERE status IN ('pending', 'sending', 'failed');
    CREATE TABLE admin_actions (
        id INTEGER PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        admin TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        session_id TEXT,
        detail TEXT NOT NULL,
        at REAL NOT NULL
    );
    CREATE INDEX admin_actions_workspace ON admin_actions(workspace_id, id);
"""


def _postgresql_only(script: str) -> Migration:
    """The shared intake table's migrations: on SQLite the intake is a file of its own."""
    return Migration(sqlite="", postgresql=script)


MIGRATIONS: list[str | Migration] = [
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
    # 4: the platform's id of every chunk delivered (unique in its workspace: the transport
    # qualifies it with the chat where it must), so a reply to it can be matched; whose a
    # notification is, for the answer to reach that agent (issue 12).
    """
    CREATE TABLE delivery_posts (
        delivery_id TEXT NOT NULL,
        chunk INTEGER NOT NULL,
        workspace_key TEXT NOT NULL,
        message_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        posted_at REAL NOT NULL,
        PRIMARY KEY (delivery_id, chunk)
    );
    CREATE INDEX delivery_posts_message ON delivery_posts(workspace_key, message_id);
    CREATE INDEX delivery_posts_age ON delivery_posts(posted_at)
        WHERE kind != 'notification';
    ALTER TABLE notification_routes ADD COLUMN session_id TEXT;
    ALTER TABLE notification_routes ADD COLUMN agent_id TEXT;
    ALTER TABLE notification_routes ADD COLUMN requested_by_agent_id TEXT;
    ALTER TABLE notification_routes ADD COLUMN summary TEXT;
    CREATE INDEX notification_routes_delivery ON notification_routes(delivery_id);
    """,
    # 5: operators' messages with files, held from the platform's ack until their files are
    # downloaded and the prompt is submitted (issue 12); resumed at start-up.
    """
    CREATE TABLE inbound_pending (
        id TEXT PRIMARY KEY,
        platform TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        body TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        created_at REAL NOT NULL
    );
    """,
    # 6: messages progress shows (a progress message, a half-streamed answer), so that what
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
    # 7: the admin console (issue 13). A delivery names its workspace, so a workspace's open
    # and failed deliveries are found by an index; what admins did, per workspace (each
    # action is also a ledger event, written in the same transaction).
    Migration(
        sqlite=_ADMIN.format(workspace="json_extract(route, '$.workspace_id')"),
        postgresql=_ADMIN.format(workspace="route::json ->> 'workspace_id'"),
    ),
    # 8: platform requests a standby replica took (issue 14): verified and acknowledged there,
    # handled by the active replica in the order they came. A platform id names a request once,
    # so a retry that lands on another standby is acknowledged and not stored twice. On
    # PostgreSQL only since issue 39 (replicas share a PostgreSQL database; migration 17 drops
    # what an older version made on SQLite).
    _postgresql_only(
        """
    CREATE TABLE forwarded_requests (
        id INTEGER PRIMARY KEY,
        platform TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        dedupe_key TEXT UNIQUE,
        body TEXT NOT NULL,
        headers TEXT NOT NULL,
        query TEXT NOT NULL,
        received_at REAL NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT
    );
    """
    ),
    # 9: which delivery asks an operator's yes or no about what (issue 15: a tool call's
    # approval; issue 17: a pairing request), so a press of its buttons (or a reply to it)
    # answers that.
    """
    CREATE TABLE decision_posts (
        delivery_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        ref TEXT NOT NULL
    );
    """,
    # 10: DM pairing (issue 17): codes given to senders who are not operators, and the
    # senders approved (or revoked) since; `announced` once the running process has told the
    # sender and written the ledger event (an approval by the CLI is written by another
    # process).
    """
    CREATE TABLE pairing_requests (
        code TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        platform TEXT NOT NULL,
        sender_id TEXT NOT NULL,
        sender_name TEXT,
        route TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        reminded_at REAL,
        decided_by TEXT,
        decided_at REAL,
        announced INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX pairing_sender ON pairing_requests(workspace_id, platform, sender_id, status);
    CREATE INDEX pairing_unannounced ON pairing_requests(announced) WHERE announced = 0;
    CREATE TABLE paired_senders (
        workspace_id TEXT NOT NULL,
        platform TEXT NOT NULL,
        sender_id TEXT NOT NULL,
        sender_name TEXT,
        code TEXT NOT NULL,
        approved_by TEXT NOT NULL,
        approved_at REAL NOT NULL,
        PRIMARY KEY (workspace_id, platform, sender_id)
    );
    """,
    # 11: how people name a conversation (issue 29): what the platform told of it with the
    # last operator's message there, so that status and the console say "Telegram, DM with
    # Alice" where they said a conversation key.
    """
    CREATE TABLE conversation_names (
        conversation_key TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        is_direct INTEGER NOT NULL,
        title TEXT,
        person TEXT,
        operator_id TEXT NOT NULL,
        updated_at REAL NOT NULL
    );
    """,
    # 12: one way in (issue 30): every request from outside that a replica takes is stored
    # here, checked at its door, before the platform is answered; the active replica hands
    # them to the platforms' decoders. `place` orders a conversation's requests; `verified`
    # says what was checked at the door. On PostgreSQL only since issue 39: on SQLite the intake
    # is a file of its own beside the database (`bridge/store/intake.py`, `InboxTable`).
    _postgresql_only(
        """
    ALTER TABLE forwarded_requests RENAME TO intake;
    ALTER TABLE intake ADD COLUMN place TEXT NOT NULL DEFAULT '';
    ALTER TABLE intake ADD COLUMN verified TEXT NOT NULL DEFAULT '';
    """
    ),
    # 13: work with no operator message (issue 31). Each schedule's or trigger's state (paused
    # by an operator; the session it keeps between runs), and each run it started: a fire is
    # stored with the message it becomes, under a key unique per schedule (its slot) or
    # trigger (the delivery id), so a restart or a second replica never runs it twice.
    """
    CREATE TABLE automation_states (
        workspace_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        automation_id TEXT NOT NULL,
        paused INTEGER NOT NULL DEFAULT 0,
        changed_by TEXT,
        session_id TEXT,
        since REAL NOT NULL,
        PRIMARY KEY (workspace_id, kind, automation_id)
    );
    CREATE TABLE automation_runs (
        workspace_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        automation_id TEXT NOT NULL,
        fire_key TEXT NOT NULL,
        slot_at REAL NOT NULL,
        fired_at REAL NOT NULL,
        missed INTEGER NOT NULL DEFAULT 0,
        outcome TEXT NOT NULL,
        detail TEXT,
        session_id TEXT,
        message_id TEXT,
        PRIMARY KEY (workspace_id, kind, automation_id, fire_key)
    );
    CREATE INDEX automation_runs_latest
        ON automation_runs(workspace_id, kind, automation_id, slot_at);
    CREATE INDEX automation_runs_message ON automation_runs(message_id);
    """,
    # 14: buttons under a message (issue 31: /schedules' Pause, Resume, Run now, Cancel), each
    # a label and the command a press runs, as JSON with the delivery that carries them: a
    # restart before the send keeps them, and a press finds them through the message posted.
    """
    ALTER TABLE deliveries ADD COLUMN buttons TEXT;
    """,
    # 15: budget warnings sent (issue 32): once per budget and period.
    """
    CREATE TABLE spend_warnings (
        workspace_id TEXT NOT NULL,
        budget TEXT NOT NULL,
        period_start REAL NOT NULL,
        warned_at REAL NOT NULL,
        PRIMARY KEY (workspace_id, budget, period_start)
    );
    """,
    # 16: budgets that cannot be overshot (issue 38). A model call let through reserves its
    # estimate, checked against every budget and written in one statement under the write
    # lock, until its usage is recorded; and the turns a budget holds, for every status.
    """
    CREATE TABLE spend_reservations (
        run_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        payer TEXT,
        at REAL NOT NULL,
        expires_at REAL NOT NULL,
        cost_usd REAL NOT NULL,
        tokens INTEGER NOT NULL
    );
    CREATE TABLE spend_holds (
        run_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        budget TEXT NOT NULL,
        until REAL,
        held_at REAL NOT NULL
    );
    """,
    # 17: no intake table in a SQLite database (issue 39): there the intake is the inbox file
    # beside it; migrations 8 and 12 made one that was never used.
    Migration(
        sqlite="DROP TABLE IF EXISTS intake; DROP TABLE IF EXISTS forwarded_requests;",
        postgresql="SELECT 1;",
    ),
    # 18: a delivery that rewrites a message already posted, in place (issue 43: a pressed
    # /schedules list shows its new state): the platform's id of that message.
    """
    ALTER TABLE deliveries ADD COLUMN replaces TEXT;
    """,
    # 19: what the running process found of its MCP servers and platform connections (issue
    # 43), so `switchboard status`, another process, says it too: a row each, rewritten as it
    # changes and every few seconds (`checked_at` says how fresh it is).
    """
    CREATE TABLE health (
        subject TEXT PRIMARY KEY,
        workspace_id TEXT,
        ok INTEGER NOT NULL,
        words TEXT NOT NULL,
        replica TEXT,
        checked_at REAL NOT NULL
    );
    """,
]
