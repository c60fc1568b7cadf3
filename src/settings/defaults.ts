/**
 * Every setting and its default, in one place. The loader walks this object: a leaf at
 * `section.key` is read from the config file under that path and from the environment as
 * `KLAXON_<SECTION>_<KEY>`; a top-level leaf as `KLAXON_<KEY>`. The sample config in
 * config/klaxon.yaml documents each of them.
 */
export const DEFAULT_SETTINGS = {
  host: "0.0.0.0",
  port: 8080,
  data_dir: "./data",
  public_url: "",
  http: {
    /** Connections served at once, in all; lowered at start to what the open-files limit allows (less 256). */
    max_connections: 4096,
    /** Connections one client address may hold at once. */
    max_connections_per_address: 64,
    /** Loopback peers (a TLS proxy on this box, through which every client is 127.0.0.1) count only towards max_connections. */
    loopback_exempt: true,
    /** Requests worked on at once (read, queued for the journal, answered); one more is answered 503 with Retry-After at once. */
    max_requests_in_flight: 1024,
    headers_timeout_seconds: 10,
    request_timeout_seconds: 30,
    keep_alive_timeout_seconds: 5
  },
  log: {
    level: "info" as "debug" | "info" | "warn" | "error",
    syslog_prefix: "auto" as "auto" | "on" | "off"
  },
  rate_limit: {
    per_second: 50,
    burst: 200,
    auth_failures_per_minute: 20
  },
  journal: {
    checkpoint_interval_ms: 1000,
    max_batch: 512,
    idempotency_hours: 24
  },
  smtp: {
    host: "",
    port: 587,
    user: "",
    password: "",
    from: "",
    secure: false,
    concurrency: 4,
    timeout_seconds: 30,
    check_seconds: 60,
    ack_link_days: 7
  },
  telegram: {
    bot_token: "",
    api_url: "https://api.telegram.org",
    poll_timeout_seconds: 25,
    probe_interval_seconds: 30,
    probe_max_backoff_seconds: 120,
    request_timeout_seconds: 15,
    max_retry_after_seconds: 60,
    voice: "en-us"
  },
  modem: {
    port: "",
    profile: "sim800" as "sim800" | "sim7600" | "quectel",
    pin: "",
    ring_timeout_seconds: 45,
    key_wait_seconds: 8,
    speech_repeats: 3,
    ack_key: "1",
    repeat_key: "2",
    pass_key: "9",
    sms_reply_code_hours: 24,
    sms_max_parts: 3,
    quectel_urc_port: "usbat" as "" | "usbat" | "usbmodem" | "uart1"
  },
  inbound_email: {
    /** The SMTP listener for email integrations; 0 (the default) leaves it off. */
    port: 0,
    /** The address it binds: every interface, since devices on the LAN send to it. */
    address: "0.0.0.0",
    /** The domain of integrations' addresses (`<token>@<domain>`); empty: the host of public_url, else the box's hostname. */
    domain: "",
    /** Largest mail accepted (SIZE); a bigger one is refused with 552 and counted. */
    max_bytes: 1_048_576,
    /** PEM files for STARTTLS; both empty: no STARTTLS. */
    tls_cert_file: "",
    tls_key_file: "",
    /** Both set: senders must AUTH (PLAIN or LOGIN, after STARTTLS when it is offered) with these. */
    user: "",
    password: "",
    /** SMTP sessions one client address may hold at once; one more is answered 421, so one host cannot take every slot. */
    max_sessions_per_address: 8,
    /** The longest an SMTP session lasts, whatever it sends (NOOPs included); then 421 and the close. */
    session_max_seconds: 300,
    /** Failed logins per client address and minute; beyond them AUTH from that address is refused (421) unchecked. */
    auth_failures_per_minute: 10
  },
  snmp: {
    /** The UDP port of the SNMP trap listener for snmp_trap integrations; 0 (the default) leaves it off. Traps' own port is 162. */
    trap_port: 0,
    /** The IPv4 address it binds: every interface, since devices on the LAN send to it. */
    trap_address: "0.0.0.0"
  },
  dashboard: {
    session_hours: 12,
    sign_in_attempts_per_minute: 5
  },
  webhooks: {
    /** Let webhooks go to link-local (169.254.0.0/16, fe80::/10) and unspecified (0.0.0.0/8, ::) addresses. */
    allow_link_local: false
  },
  backup: {
    schedule: "30 2 * * *",
    keep: 7
  },
  retention: {
    notifications_days: 90,
    audit_days: 365
  },
  paging: {
    /**
     * The paging auditor's limit: an alert that is not acknowledged, resolved or held must have a
     * page carried (handed to a channel) this long after it was accepted, unless the journal
     * records a reason it may not (quiet hours, a channel it waits for). Otherwise it is made loud.
     */
    first_attempt_deadline_seconds: 60
  },
  storm: {
    /** A new alert to someone already being paged (a storm) waits at most this long to be named in a page to them. */
    max_join_delay_seconds: 30
  },
  self_monitoring: {
    recipient: "",
    priority: "high" as "critical" | "high" | "medium" | "low" | "info",
    interval_seconds: 60,
    signal_min_dbm: -105,
    outbox_max_age_minutes: 60
  },
  replication: {
    /** off: one box, as ever. active or standby: two boxes, the journal shipped by Litestream (docs/high-availability.md). */
    role: "off" as "off" | "active" | "standby",
    /** This box's name in pages and beacons ("klaxon-a"); empty: the hostname. */
    box_name: "",
    /** The other box's base URL (http://10.0.0.12:8080): watched by the standby, polled by the active. */
    peer: "",
    /** A standby takes over after the active's /healthz has been silent this long. */
    takeover_after_seconds: 30,
    /** The active pages the admin recipient when the standby's copy is older than this, or the standby is silent. */
    lag_alarm_seconds: 60,
    /** The Litestream executable. */
    litestream: "litestream",
    /** Where this box's Litestream ships the journal: a folder (a NAS mount, tests) or sftp://user@host:port/path (the peer). */
    replica: "",
    /** The private key for an sftp replica, and the peer's host key as in known_hosts ("ssh-ed25519 AAAA..."). */
    sftp_key_file: "",
    sftp_host_key: "",
    /** The folder the peer's Litestream ships into on this box: what this box follows while it is the standby. */
    incoming: ""
  }
};

export type Settings = typeof DEFAULT_SETTINGS;

/** Settings whose values are secrets: never logged, never echoed by /readyz or doctor. */
export const SECRET_SETTINGS = ["smtp.password", "telegram.bot_token", "modem.pin", "inbound_email.password"] as const;

/** Allowed values for settings that are enumerations. */
export const SETTING_CHOICES: Record<string, readonly string[]> = {
  "log.level": ["debug", "info", "warn", "error"],
  "log.syslog_prefix": ["auto", "on", "off"],
  "modem.profile": ["sim800", "sim7600", "quectel"],
  "modem.quectel_urc_port": ["", "usbat", "usbmodem", "uart1"],
  "self_monitoring.priority": ["critical", "high", "medium", "low", "info"],
  "replication.role": ["off", "active", "standby"]
};
