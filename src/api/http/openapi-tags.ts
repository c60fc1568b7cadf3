/**
 * The OpenAPI document's tags: one per area of the API, named for what a client does there
 * (not for the controller class), each with a description. Use with `@Tags(API_TAGS.x)` on a
 * controller; a tag is listed in the document where it is first used.
 */
export const API_TAGS = {
  health: {
    name: "health",
    description: "Liveness and readiness probes for systemd, load balancers and monitoring. No key."
  },
  problems: {
    name: "problems",
    description:
      "What each error code means and what to do about it: the `type` of every problem+json answer links here. No key."
  },
  metrics: {name: "metrics", description: "Prometheus metrics in the text exposition format. No key."},
  pings: {
    name: "pings",
    description:
      "A heartbeat's key-less ping URLs, for cron jobs and devices that cannot hold an API key: the secret token in the path is the credential. Rotate it with POST /api/v1/heartbeats/{name}/rotate-ping-url."
  },
  notifications: {
    name: "notifications",
    description: "Send alerts, follow their escalation and delivery attempts, acknowledge and resolve them."
  },
  recipients: {
    name: "recipients",
    description: "The people alerts reach: their contacts per channel (phone, Telegram, e-mail) and quiet hours."
  },
  groups: {
    name: "groups",
    description: "Named groups of recipients; an alert sent to a group escalates through its members."
  },
  calendars: {
    name: "calendars",
    description:
      "Key-less iCal (RFC 5545) feeds of on-call shifts, per schedule and per recipient, to subscribe to from a phone's calendar: the secret token in the path is the credential."
  },
  escalation_policies: {
    name: "policies",
    description:
      "Ordered levels of recipients, groups and schedules, each paged for a set time before the next level starts; a policy's uuid is a send target like a recipient's."
  },
  schedules: {
    name: "schedules",
    description:
      "On-call schedules: rotations and shift patterns in layers, with overrides. An alert sent to a schedule pages whoever is on call at each escalation step."
  },
  keys: {
    name: "keys",
    description: "API keys, one per integration or client, each limited to the scopes it needs. Admin keys only."
  },
  audit: {
    name: "audit",
    description:
      "The audit log: who (an API key, a dashboard user, an integration or the system, each by name) did what, newest first. Admin keys only."
  },
  users: {
    name: "users",
    description:
      "The people who sign in to the dashboard, each with a role (admin, operator, viewer) and optionally the recipient they are. Admin keys only; passwords are never shown."
  },
  webhooks: {
    name: "webhooks",
    description:
      "Outbound webhooks: signed (Standard Webhooks) event deliveries to your URLs, with each delivery attempt kept."
  },
  backups: {
    name: "backups",
    description: "Backups of the journal and the config store, kept on the gateway. Admin keys only."
  },
  heartbeats: {
    name: "heartbeats",
    description: "Dead man's switches for cron jobs and devices: a heartbeat pages when its pings stop coming."
  },
  maintenance: {
    name: "maintenance",
    description:
      "Maintenance windows: planned times in which matching alerts are recorded but page nobody; integration alerts still firing and heartbeats still down page when the window ends."
  },
  integrations: {
    name: "integrations",
    description:
      "Inbound integrations: generic events and Prometheus Alertmanager webhooks become alerts, authenticated by an API key, a signature or a key-less URL."
  },
  replication: {
    name: "replication",
    description:
      "Between the two boxes of a pair only: a former active hands the new active what it accepted and never shipped. Authenticated by the pair's box token (X-Klaxon-Box-Token), not an API key."
  }
} satisfies Record<string, {name: string; description: string}>;
