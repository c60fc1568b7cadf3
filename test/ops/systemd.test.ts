import {afterEach, describe, expect, it} from "vitest";
import {spawn, spawnSync} from "node:child_process";
import {closeSync, fstatSync, openSync, readFileSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {ALL_CHANNELS_CONFIGURED, startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";
import {ManualClock} from "../../src/lib/clock.js";
import {createLogger} from "../../src/lib/logger.js";
import {SystemdNotifier} from "../../src/ops/systemd-notify.js";
import {Watchdog} from "../../src/ops/watchdog.js";
import {RUNNER_STUCK_AFTER_MS} from "../../src/ops/liveness.js";
import {openNotifySocket, type NotifySocket} from "./notify-socket.js";

const ROOT = join(import.meta.dirname, "../..");
const UNIT = join(ROOT, "systemd/klaxon.service");
const HAS_SYSTEMD_ANALYZE = spawnSync("systemd-analyze", ["--version"]).status === 0;

let socket: NotifySocket | null = null;
let gw: TestGateway | null = null;
afterEach(async () => {
  socket?.close();
  socket = null;
  await gw?.stop();
  gw = null;
});

/** The unit with ExecStart's node (the release's own, under /opt/klaxon) one that exists here. */
function verifyUnit(text: string): {status: number | null; output: string} {
  const path = join(tempDir(), "klaxon.service");
  writeFileSync(path, text.replace("ExecStart=/opt/klaxon/runtime/bin/node ", `ExecStart=${process.execPath} `));
  const result = spawnSync("systemd-analyze", ["verify", path], {encoding: "utf8"});
  return {status: result.status, output: (result.stdout + result.stderr).trim()};
}

describe("systemd/klaxon.service", () => {
  it.skipIf(!HAS_SYSTEMD_ANALYZE)(
    "passes systemd-analyze verify without a single warning (skipped only where systemd-analyze is not installed)",
    () => {
      expect(verifyUnit(readFileSync(UNIT, "utf8"))).toEqual({status: 0, output: ""});
      // The same check does report a mistake, so the clean result above means something.
      expect(
        verifyUnit(
          readFileSync(UNIT, "utf8").replace("NoNewPrivileges=yes", "NoNewPrivileges=yes\nProtectSystm=strict")
        ).output
      ).toContain("Unknown key 'ProtectSystm'");
    }
  );

  it("declares the notify protocol, the watchdog and the hardening the appliance relies on", () => {
    const unit = readFileSync(UNIT, "utf8");
    for (const line of [
      "Type=notify",
      "NotifyAccess=all",
      "WatchdogSec=30",
      "Restart=on-failure",
      "NoNewPrivileges=yes",
      "ProtectSystem=strict",
      "ProtectHome=yes",
      "PrivateTmp=yes",
      "ReadWritePaths=/var/lib/klaxon",
      "DevicePolicy=closed",
      "DeviceAllow=char-ttyUSB rw",
      "DeviceAllow=char-ttyACM rw",
      "DeviceAllow=char-ttyAMA rw",
      "DeviceAllow=char-ttyS rw",
      "DeviceAllow=char-ttySC rw",
      "SupplementaryGroups=dialout",
      "CapabilityBoundingSet=CAP_NET_BIND_SERVICE",
      "AmbientCapabilities=CAP_NET_BIND_SERVICE",
      "SystemCallFilter=@system-service",
      "Environment=KLAXON_CONFIG=/etc/klaxon/klaxon.yaml",
      "Environment=KLAXON_DATA_DIR=/var/lib/klaxon",
      "ExecStart=/opt/klaxon/runtime/bin/node --max-semi-space-size=4 --initial-old-space-size=24 --v8-pool-size=2 --expose-gc /opt/klaxon/dist/main.js",
      "User=klaxon",
      "SyslogIdentifier=klaxon",
      "SyslogLevelPrefix=true"
    ]) {
      expect(unit.split("\n")).toContain(line);
    }
    expect(unit).toMatch(/^RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6/m);
  });
});

describe("SystemdNotifier", () => {
  it("sends READY, WATCHDOG and STOPPING to a real notify socket", async () => {
    socket = await openNotifySocket();
    const notifier = new SystemdNotifier(
      {NOTIFY_SOCKET: socket.path},
      createLogger("error", () => {})
    );
    await notifier.ready("serving on http://127.0.0.1:8080");
    await notifier.watchdog();
    await notifier.stopping();
    await socket.waitFor((message) => message.startsWith("STOPPING=1"));
    expect(socket.messages).toEqual([
      "READY=1\nSTATUS=serving on http://127.0.0.1:8080",
      "WATCHDOG=1",
      "STOPPING=1\nSTATUS=stopping"
    ]);
  });

  it("does nothing outside systemd, and reads the watchdog period only for this process", async () => {
    const lines: string[] = [];
    const outside = new SystemdNotifier(
      {},
      createLogger("debug", (line) => lines.push(line)),
      "/nonexistent/systemd-notify"
    );
    await outside.ready("x");
    expect(lines).toEqual([]);
    expect(outside.watchdogIntervalMs).toBeNull();
    const logger = createLogger("error", () => {});
    expect(
      new SystemdNotifier({NOTIFY_SOCKET: "/run/x", WATCHDOG_USEC: "30000000"}, logger, "systemd-notify", 42)
        .watchdogIntervalMs
    ).toBe(15_000);
    expect(
      new SystemdNotifier(
        {NOTIFY_SOCKET: "/run/x", WATCHDOG_USEC: "30000000", WATCHDOG_PID: "42"},
        logger,
        "systemd-notify",
        42
      ).watchdogIntervalMs
    ).toBe(15_000);
    expect(
      new SystemdNotifier(
        {NOTIFY_SOCKET: "/run/x", WATCHDOG_USEC: "30000000", WATCHDOG_PID: "7"},
        logger,
        "systemd-notify",
        42
      ).watchdogIntervalMs
    ).toBeNull();
  });

  it("logs a notification it could not send instead of failing", async () => {
    const lines: string[] = [];
    const notifier = new SystemdNotifier(
      {NOTIFY_SOCKET: "/run/x"},
      createLogger("debug", (line) => lines.push(line)),
      "/nonexistent/systemd-notify"
    );
    await notifier.watchdog();
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(["systemd notification failed"]);
  });
});

describe("the watchdog", () => {
  it("pings only while due escalation steps fire, and not when the runner leaves them overdue", async () => {
    socket = await openNotifySocket();
    const clock = new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0));
    gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, {clock});
    const recipient = (
      await gw.call("POST", "/api/v1/recipients", {
        body: {name: "Ops", phone: "+4915112345678", escalation: {ack_timeout_seconds: 60, repeat: 3}}
      })
    ).body.uuid;
    expect(
      (
        await gw.call("POST", "/api/v1/notifications/send", {
          body: {recipient_uuid: recipient, message: "press 7", priority: "high"}
        })
      ).status
    ).toBe(202);
    const runner = gw.gateway.services.runner;
    await runner.idle();
    const logger = createLogger("error", () => {});
    const watchdog = new Watchdog(
      new SystemdNotifier({NOTIFY_SOCKET: socket.path}, logger),
      gw.gateway.operations.liveness,
      60_000,
      logger
    );

    await watchdog.tick();
    await socket.waitFor((message) => message === "WATCHDOG=1");

    // The next step was due a minute after the send; its timer is real time and has not fired,
    // so on this clock the step is overdue as if the runner were stuck.
    clock.advance(60_000 + RUNNER_STUCK_AFTER_MS + 1000);
    await watchdog.tick();
    const status = await socket.waitFor((message) => message.startsWith("STATUS=unhealthy"));
    expect(status).toMatch(/^STATUS=unhealthy: escalation runner: a due step is \d+ s overdue$/);
    expect(socket.messages.filter((message) => message === "WATCHDOG=1")).toHaveLength(1);

    await runner.tick();
    await runner.idle();
    await watchdog.tick();
    const pings = () => socket!.messages.filter((message) => message === "WATCHDOG=1").length;
    await socket.waitFor(() => pings() === 2);
  });
});

describe("the gateway process under a notify socket", () => {
  it("tells systemd it is ready once serving, pings the watchdog, and says it is stopping on SIGTERM", async () => {
    socket = await openNotifySocket();
    const dataDir = tempDir();
    const child = spawn(process.execPath, ["--import", "@swc-node/register/esm-register", "src/main.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        KLAXON_HOST: "127.0.0.1",
        KLAXON_PORT: "0",
        KLAXON_DATA_DIR: dataDir,
        NOTIFY_SOCKET: socket.path,
        WATCHDOG_USEC: "400000"
      },
      stdio: ["ignore", "pipe", "inherit"]
    });
    const lines: string[] = [];
    child.stdout.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean)));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      const ready = await socket.waitFor((message) => message.startsWith("READY=1"));
      const serving = JSON.parse(lines.find((line) => line.includes('"gateway serving"'))!);
      expect(ready).toBe(`READY=1\nSTATUS=serving on ${serving.url}`);
      expect((await fetch(`${serving.url}/healthz`)).status).toBe(200);
      await socket.waitFor((message) => message === "WATCHDOG=1");
      expect(readFileSync(join(dataDir, "klaxon.pid"), "utf8").trim()).toBe(String(child.pid));
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    await socket.waitFor((message) => message.startsWith("STOPPING=1"));
    expect(socket.messages[0]).toMatch(/^READY=1/);
  });
});

describe("the gateway's log lines under journald", () => {
  it("start with their syslog priority when stdout is the stream JOURNAL_STREAM names, and stay plain JSON otherwise", async () => {
    const run = async (journal: "same" | "other") => {
      const dataDir = tempDir();
      const logPath = join(dataDir, "stdout.log");
      const fd = openSync(logPath, "w");
      const stat = fstatSync(fd, {bigint: true});
      // A stream other than stdout: the variable inherited by a process whose output went elsewhere.
      const stream = journal === "same" ? `${stat.dev}:${stat.ino}` : `${stat.dev}:${stat.ino + 1n}`;
      const child = spawn(process.execPath, ["--import", "@swc-node/register/esm-register", "src/main.ts"], {
        cwd: ROOT,
        env: {
          ...process.env,
          KLAXON_HOST: "127.0.0.1",
          KLAXON_PORT: "0",
          KLAXON_DATA_DIR: dataDir,
          JOURNAL_STREAM: stream,
          NOTIFY_SOCKET: ""
        },
        stdio: ["ignore", fd, "inherit"]
      });
      closeSync(fd);
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      const lines = () => readFileSync(logPath, "utf8").split("\n").filter(Boolean);
      const deadline = Date.now() + 60_000;
      while (!lines().some((line) => line.includes('"gateway serving"')) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      return lines();
    };
    const journald = await run("same");
    expect(journald.length).toBeGreaterThan(2);
    for (const line of journald) expect(line).toMatch(/^<[3467]>\{"time":/);
    expect(journald.find((line) => line.includes('"gateway serving"'))).toMatch(/^<6>/);
    const elsewhere = await run("other");
    for (const line of elsewhere) expect(() => JSON.parse(line), line).not.toThrow();
  }, 150_000);
});
