/**
 * Numbered schema migrations. `PRAGMA user_version` holds the number applied; a database whose
 * number is higher than the last one here was written by a newer Klaxon and is refused, so a
 * downgrade can never half-understand newer rows.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: notifications, their escalation snapshot, attempts, audit, events + outbox, idempotency.
  `
  CREATE TABLE notifications (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    target_uuid TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    message TEXT NOT NULL,
    priority TEXT NOT NULL,
    source TEXT,
    dedup_key TEXT,
    link TEXT,
    service TEXT,
    environment TEXT,
    occurrences INTEGER NOT NULL DEFAULT 1,
    channels_planned TEXT NOT NULL,
    escalation_chain_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    acknowledged_at TEXT,
    acknowledged_by TEXT,
    acknowledged_via TEXT,
    ack_note TEXT,
    resolved_at TEXT,
    api_key_id TEXT
  ) STRICT;
  CREATE INDEX notifications_status ON notifications(status, id);
  CREATE INDEX notifications_target ON notifications(target_uuid, id);
  CREATE UNIQUE INDEX notifications_open_dedup ON notifications(target_uuid, dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('queued', 'notifying');

  CREATE TABLE escalations (
    id TEXT PRIMARY KEY,
    notification_id TEXT NOT NULL UNIQUE REFERENCES notifications(id),
    policy TEXT NOT NULL,
    step INTEGER NOT NULL DEFAULT 0,
    steps_total INTEGER NOT NULL,
    next_step_at TEXT,
    generation INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL
  ) STRICT;
  CREATE INDEX escalations_due ON escalations(next_step_at) WHERE next_step_at IS NOT NULL;

  CREATE TABLE attempts (
    id TEXT PRIMARY KEY,
    notification_id TEXT NOT NULL REFERENCES notifications(id),
    channel TEXT NOT NULL,
    recipient_uuid TEXT NOT NULL,
    target TEXT NOT NULL,
    step INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    outcome TEXT NOT NULL,
    error TEXT
  ) STRICT;
  CREATE INDEX attempts_notification ON attempts(notification_id, started_at);

  CREATE TABLE audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor_type TEXT NOT NULL,
    actor_id TEXT,
    action TEXT NOT NULL,
    subject_type TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    source TEXT,
    detail TEXT NOT NULL
  ) STRICT;
  CREATE INDEX audit_subject ON audit(subject_id, seq);
  CREATE INDEX audit_action ON audit(action, seq);

  CREATE TABLE events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    notification_id TEXT,
    created_at TEXT NOT NULL,
    body TEXT NOT NULL
  ) STRICT;

  CREATE TABLE outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    destination TEXT NOT NULL,
    event_id TEXT NOT NULL REFERENCES events(id),
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_error TEXT
  ) STRICT;
  CREATE INDEX outbox_due ON outbox(status, next_attempt_at);

  CREATE TABLE idempotency (
    api_key_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    response_status INTEGER NOT NULL,
    response_body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (api_key_id, idempotency_key)
  ) STRICT;
  CREATE INDEX idempotency_expiry ON idempotency(expires_at);

  CREATE TABLE probe (id INTEGER PRIMARY KEY, at TEXT NOT NULL, space BLOB) STRICT;
  `,
  // 2: the log of webhook delivery attempts, and an index that finds each subscription's oldest
  // undelivered row (deliveries go out in order per subscription).
  `
  CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    outbox_seq INTEGER NOT NULL REFERENCES outbox(seq),
    subscription_id TEXT NOT NULL,
    event_id TEXT NOT NULL REFERENCES events(id),
    attempt INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status_code INTEGER,
    error TEXT,
    duration_ms INTEGER
  ) STRICT;
  CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries(subscription_id, id);
  CREATE INDEX webhook_deliveries_unfinished ON webhook_deliveries(finished_at) WHERE finished_at IS NULL;
  CREATE INDEX outbox_open_per_destination ON outbox(kind, destination, seq) WHERE status IN ('pending', 'sending');
  `,
  // 3: contacts a channel reported permanently unreachable (bot blocked, address rejected).
  `
  CREATE TABLE contact_failures (
    recipient_uuid TEXT NOT NULL,
    channel TEXT NOT NULL,
    contact TEXT NOT NULL,
    reason TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (recipient_uuid, channel)
  ) STRICT;
  `,
  // 4: a chain folded into another chain to the same target during an alert storm waits for
  // that chain's next step (one call naming them all) and is released when it closes.
  `
  ALTER TABLE escalations ADD COLUMN grouped_with TEXT;
  CREATE INDEX escalations_grouped ON escalations(grouped_with) WHERE grouped_with IS NOT NULL;
  `,
  // Telegram: the getUpdates offset per bot (a restart neither loses nor replays a button press),
  // what each Acknowledge button acknowledges, and messages kept while Telegram was unreachable
  // (written with the skipped attempt, relayed once when the link returns).
  `
  CREATE TABLE telegram_offsets (
    bot_id TEXT PRIMARY KEY,
    next_offset INTEGER NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;
  CREATE TABLE telegram_callbacks (
    token TEXT PRIMARY KEY,
    chat_id TEXT NOT NULL,
    notification_ids TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX telegram_callbacks_created ON telegram_callbacks(created_at);
  CREATE TABLE telegram_relay (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    notification_id TEXT NOT NULL REFERENCES notifications(id),
    attempt_id TEXT,
    recipient_uuid TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL,
    finished_at TEXT,
    error TEXT
  ) STRICT;
  CREATE INDEX telegram_relay_pending ON telegram_relay(seq) WHERE status = 'pending';
  `,
  // Retention pruning: finding a notification's events and their outbox rows and deliveries,
  // and old audit entries, without scanning whole tables.
  `
  CREATE INDEX events_notification ON events(notification_id);
  CREATE INDEX outbox_event ON outbox(event_id);
  CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
  CREATE INDEX audit_at ON audit(at);
  `,
  // SMS reply codes: which alerts "ACK <code>" acknowledges, and from which number; kept in the
  // journal so a reply after a restart still counts, until it expires.
  `
  CREATE TABLE sms_reply_codes (
    code TEXT PRIMARY KEY,
    contact TEXT NOT NULL,
    notification_ids TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX sms_reply_codes_expiry ON sms_reply_codes(expires_at);
  `,
  // Heartbeats' run-time state (their definitions live in the config store): the sweep finds due
  // ones by alert_after; notification_id is the down page a good ping resolves. The dedup index
  // finds an integration's alert by its key to merge or resolve it, whatever its state.
  `
  CREATE TABLE heartbeat_states (
    name TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    last_ping_at TEXT,
    last_start_at TEXT,
    expected_at TEXT,
    down_at TEXT,
    alert_after TEXT,
    notification_id TEXT,
    updated_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX heartbeat_states_due ON heartbeat_states(alert_after) WHERE alert_after IS NOT NULL;
  CREATE INDEX notifications_dedup ON notifications(dedup_key, id) WHERE dedup_key IS NOT NULL;
  `,
  // The paging guarantee: which steps of a chain were carried (a blocked step is tried again
  // later) and which skips were already recorded; why an open chain waits for a channel
  // (undeliverable, shown loudly); a per-notification sequence on events for causal order.
  `
  ALTER TABLE escalations ADD COLUMN progress TEXT NOT NULL DEFAULT '{}';
  ALTER TABLE escalations ADD COLUMN waiting_for TEXT;
  CREATE INDEX escalations_waiting ON escalations(notification_id) WHERE waiting_for IS NOT NULL;
  ALTER TABLE events ADD COLUMN sequence INTEGER;
  `,
  // Incoming SMS, committed before the modem deletes them from the SIM: the message as the modem
  // listed it (raw), what it says when it could be read, and whether it was acted on. A message
  // listed twice (its delete failed) is the same row: (sim_index, raw) is unique.
  `
  CREATE TABLE inbound_sms (
    id INTEGER PRIMARY KEY,
    stored_at TEXT NOT NULL,
    sim_index INTEGER NOT NULL,
    form TEXT NOT NULL,
    raw TEXT NOT NULL,
    status TEXT NOT NULL,
    problem TEXT,
    sender TEXT,
    body TEXT,
    sent_at TEXT,
    part_reference INTEGER,
    part_total INTEGER,
    part_sequence INTEGER,
    handled_at TEXT
  ) STRICT;
  CREATE UNIQUE INDEX inbound_sms_listed ON inbound_sms(sim_index, raw);
  CREATE INDEX inbound_sms_waiting ON inbound_sms(id) WHERE status = 'waiting';
  `,
  // Maintenance windows live in the journal, so a window's end and the release of the alerts it
  // held commit together, and a window that ended while the gateway was off is found on start
  // (released_at still null). A suppression row remembers which window held an alert and where
  // the alert came from, so its release can be decided after a restart.
  `
  CREATE TABLE maintenance_windows (
    uuid TEXT PRIMARY KEY,
    starts_at TEXT NOT NULL,
    ends_at TEXT NOT NULL,
    reason TEXT NOT NULL,
    scope TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    released_at TEXT
  ) STRICT;
  CREATE INDEX maintenance_windows_unreleased ON maintenance_windows(ends_at) WHERE released_at IS NULL;
  CREATE TABLE suppressions (
    notification_id TEXT PRIMARY KEY REFERENCES notifications(id),
    window_uuid TEXT NOT NULL,
    integration_id TEXT,
    heartbeat TEXT
  ) STRICT;
  CREATE INDEX suppressions_window ON suppressions(window_uuid);
  `,
  // Device integrations (email, MQTT, SNMP traps): counters per integration, committed with the
  // intake's outcome so they survive a restart, and the messages that mapped to nothing or were
  // refused, kept for a person to read (the newest 200 per integration). A refusal that names no
  // integration counts under "*<transport>" with its kind, for the metric.
  `
  CREATE TABLE integration_stats (
    integration_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    received INTEGER NOT NULL DEFAULT 0,
    accepted INTEGER NOT NULL DEFAULT 0,
    refused INTEGER NOT NULL DEFAULT 0,
    unmapped INTEGER NOT NULL DEFAULT 0,
    last_event_at TEXT,
    last_error TEXT,
    last_error_at TEXT
  ) STRICT;
  CREATE TABLE integration_log (
    id INTEGER PRIMARY KEY,
    integration_id TEXT NOT NULL,
    received_at TEXT NOT NULL,
    outcome TEXT NOT NULL,
    origin TEXT NOT NULL,
    summary TEXT NOT NULL,
    body TEXT NOT NULL,
    size INTEGER NOT NULL,
    reason TEXT
  ) STRICT;
  CREATE INDEX integration_log_by_integration ON integration_log(integration_id, id);
  `,
  // Two boxes (docs/high-availability.md): Litestream ships this file alone, so what a takeover
  // needs besides the alerts travels in it. Documents: the run-time configuration (config.json on a
  // single box), the ack-link key, the replication epoch. The beacon: the active's heartbeat, whose
  // age in the standby's copy is the replication lag.
  `
  CREATE TABLE replicated_documents (
    name TEXT PRIMARY KEY,
    body TEXT NOT NULL
  ) STRICT;
  CREATE TABLE replication_beacon (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    box TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    written_at TEXT NOT NULL
  ) STRICT;
  `,
  // The paging auditor's findings (docs/reliability.md): the alerts it found with no page carried
  // in time and no recorded reason, each once, so its alarm outlives a restart and its webhook
  // goes out once. A row goes when the alert is carried, closed or explained.
  `
  CREATE TABLE paging_audit (
    notification_id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    found_at TEXT NOT NULL
  ) STRICT;
  `,
  // The journal knows itself (docs/operations.md, "The journal's identity"): an id made once, when
  // this table is, and the commits the journal had made at its last seal. The config store keeps
  // the same pair, so a start can tell a missing, foreign or older journal from the one it last wrote.
  `
  CREATE TABLE journal_identity (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    id TEXT NOT NULL,
    commits INTEGER NOT NULL
  ) STRICT;
  INSERT INTO journal_identity (singleton, id, commits) VALUES (1, lower(hex(randomblob(16))), 0);
  `,
  // The tail comes home (docs/high-availability.md): what a former active accepted and never
  // shipped, handed to the new active: each change once per notification, so a replayed hand-over
  // changes nothing, and the long form can say which of its changes came back this way.
  `
  CREATE TABLE recovered_changes (
    notification_id TEXT NOT NULL REFERENCES notifications(id),
    change TEXT NOT NULL,
    from_box TEXT NOT NULL,
    hand_over TEXT NOT NULL,
    recovered_at TEXT NOT NULL,
    PRIMARY KEY (notification_id, change)
  ) STRICT;
  CREATE INDEX recovered_changes_by_hand_over ON recovered_changes(hand_over);
  `
];

export class NewerJournalError extends Error {
  override name = "NewerJournalError";
}
