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
  log: {
    level: "info" as "debug" | "info" | "warn" | "error"
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
    secure: false
  },
  telegram: {
    bot_token: "",
    api_url: "https://api.telegram.org"
  },
  modem: {
    port: "",
    profile: "sim800" as "sim800" | "sim7600" | "quectel",
    pin: ""
  }
};

export type Settings = typeof DEFAULT_SETTINGS;

/** Settings whose values are secrets: never logged, never echoed by /readyz or doctor. */
export const SECRET_SETTINGS = ["smtp.password", "telegram.bot_token", "modem.pin"] as const;

/** Allowed values for settings that are enumerations. */
export const SETTING_CHOICES: Record<string, readonly string[]> = {
  "log.level": ["debug", "info", "warn", "error"],
  "modem.profile": ["sim800", "sim7600", "quectel"]
};
