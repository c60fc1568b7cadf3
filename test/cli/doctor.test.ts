import {chmodSync, rmSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {createRecipient, startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";
import {startSmtpPeer, type SmtpPeer} from "../support/smtp-peer.js";
import {startFakeBotApi, type FakeBotApi} from "../support/telegram-bot-api.js";
import {PtyPair} from "../support/pty-pair.js";
import {Journal} from "../../src/store/journal/journal.js";
import {createLogger} from "../../src/lib/logger.js";
import {damageTablePage} from "../support/journal-damage.js";
import {ensureKlaxonAdmin, runKlaxonAdmin} from "./support/klaxon-admin.js";
import {NO_CHANNEL_WATCH, sendUndeliverable, setWaiting, SMTP_NOT_CONFIGURED} from "../support/undeliverable.js";

const SMTP_LOGIN = {user: "klaxon@factory.lan", password: "smtp-Secret-4711"};
const BOT_TOKEN = "777000:AAH-doctor-test-token-0123456789abcdef";

let gw: TestGateway;
let smtp: SmtpPeer;
let bot: FakeBotApi;
let pty: PtyPair;
let configDir: string;

beforeAll(async () => {
  await ensureKlaxonAdmin();
  smtp = await startSmtpPeer({auth: SMTP_LOGIN});
  bot = await startFakeBotApi(BOT_TOKEN);
  configDir = tempDir("klaxon-doctor-");
  pty = new PtyPair(configDir);
  await pty.start();
  pty.publish();
  gw = await startTestGateway(
    {
      smtp: {
        host: "127.0.0.1",
        port: smtp.port,
        user: SMTP_LOGIN.user,
        password: SMTP_LOGIN.password,
        from: "klaxon@factory.lan"
      },
      telegram: {bot_token: BOT_TOKEN, api_url: bot.url},
      modem: {port: pty.devicePath}
    },
    NO_CHANNEL_WATCH
  );
}, 120_000);
afterAll(async () => {
  await gw.stop();
  await pty.kill();
  await smtp.stop();
  await bot.close();
  rmSync(configDir, {recursive: true, force: true});
});

function writeConfig(name: string, yaml: string): string {
  const path = join(configDir, name);
  writeFileSync(path, yaml);
  return path;
}

function goodConfig(
  overrides: {dataDir?: string; port?: number; password?: string; token?: string; modem?: string} = {}
): string {
  return [
    `data_dir: ${overrides.dataDir ?? gw.dataDir}`,
    `port: ${overrides.port ?? new URL(gw.url).port}`,
    "smtp:",
    "  host: 127.0.0.1",
    `  port: ${smtp.port}`,
    `  user: ${SMTP_LOGIN.user}`,
    `  password: ${overrides.password ?? SMTP_LOGIN.password}`,
    "  from: klaxon@factory.lan",
    "telegram:",
    `  bot_token: "${overrides.token ?? BOT_TOKEN}"`,
    `  api_url: ${bot.url}`,
    "modem:",
    `  port: ${overrides.modem ?? pty.devicePath}`,
    ""
  ].join("\n");
}

interface Check {
  name: string;
  status: string;
  detail: string;
}

async function doctor(config: string, ...extra: string[]) {
  const run = await runKlaxonAdmin(["doctor", "--json", ...extra], {
    KLAXON_CONFIG: config,
    KLAXON_API_KEY: gw.adminKey
  });
  const report = JSON.parse(run.stdout) as {ok: boolean; checks: Check[]};
  const status = Object.fromEntries(report.checks.map((check) => [check.name, check.status]));
  return {run, report, status};
}

describe("klaxon-admin doctor", () => {
  it("finds nothing wrong with a working installation, and prints no secret", async () => {
    const config = writeConfig("good.yaml", goodConfig());
    const {run, report, status} = await doctor(config);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(report.ok).toBe(true);
    expect(status).toMatchObject({
      config: "ok",
      "data dir": "ok",
      journal: "ok",
      gateway: "ok",
      "gateway journal": "ok",
      "modem port": "ok",
      smtp: "ok",
      telegram: "ok"
    });
    expect(report.checks.find((check) => check.name === "telegram")!.detail).toContain("@");
    expect(smtp.logins).toContainEqual({username: SMTP_LOGIN.user, password: SMTP_LOGIN.password});
    expect(bot.calls("getMe").length).toBeGreaterThan(0);

    const human = await runKlaxonAdmin(["doctor", "--config", config], {KLAXON_API_KEY: gw.adminKey});
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /^ok\s+smtp\s+127\.0\.0\.1:\d+ accepted the connection and the login of klaxon@factory\.lan$/m
    );
    expect(human.stdout).toContain("no problems found");
    for (const output of [run.stdout, run.stderr, human.stdout, human.stderr]) {
      for (const secret of [SMTP_LOGIN.password, BOT_TOKEN, gw.adminKey]) expect(output).not.toContain(secret);
    }
  });

  it("names every broken part of a broken installation, still without secrets", async () => {
    const openDir = tempDir("klaxon-open-data-");
    chmodSync(openDir, 0o755);
    const wrongToken = "777000:AAH-wrong-token-for-the-doctor-0000000";
    const config = writeConfig(
      "broken.yaml",
      goodConfig({
        dataDir: openDir,
        port: 39999,
        password: "wrong-Password-99",
        token: wrongToken,
        modem: join(configDir, "no-modem")
      })
    );
    const {run, report, status} = await doctor(config);
    expect(run.code).toBe(1);
    expect(report.ok).toBe(false);
    expect(status).toMatchObject({
      config: "ok",
      "data dir": "fail",
      journal: "fail",
      gateway: "fail",
      "modem port": "fail",
      smtp: "fail",
      telegram: "fail"
    });
    const detail = (name: string) => report.checks.find((check) => check.name === name)!.detail;
    expect(detail("data dir")).toContain("mode 755");
    expect(detail("journal")).toContain("not found");
    expect(detail("gateway")).toContain("ECONNREFUSED");
    expect(detail("modem port")).toContain("does not exist");
    expect(detail("smtp")).toMatch(/535|Invalid login|credentials/i);
    expect(detail("telegram")).toContain("401");
    for (const secret of ["wrong-Password-99", wrongToken, gw.adminKey]) {
      expect(run.stdout + run.stderr).not.toContain(secret);
    }
    rmSync(openDir, {recursive: true, force: true});
  });

  it("says which configuration it read when the running gateway has channels that one lacks", async () => {
    // Only where the gateway is, as a doctor run without the gateway's KLAXON_CONFIG would see it.
    const config = writeConfig("bare.yaml", `data_dir: ${gw.dataDir}\nport: ${new URL(gw.url).port}\n`);
    const {report, status} = await doctor(config);
    expect(status.smtp).toBe("skip");
    expect(status["config mismatch"]).toBe("warn");
    const mismatch = report.checks.find((check) => check.name === "config mismatch")!;
    expect(mismatch.detail).toContain(
      `has telegram_voice, voice_call, sms, email working, but the settings read here (${config})`
    );
    expect(mismatch.detail).toContain("KLAXON_CONFIG");
    // The gateway's own configuration: nothing to say.
    expect((await doctor(writeConfig("matching.yaml", goodConfig()))).status["config mismatch"]).toBeUndefined();
  });

  it("reports a config file that does not load, with exit 1", async () => {
    const config = writeConfig("typo.yaml", "smtp:\n  hots: mail.factory.lan\n");
    const {run, report} = await doctor(config);
    expect(run.code).toBe(1);
    expect(report.checks).toEqual([
      expect.objectContaining({
        name: "config",
        status: "fail",
        detail: expect.stringContaining('unknown setting "smtp.hots"')
      })
    ]);
    const unparsable = await doctor(writeConfig("bad.yaml", "smtp: [unclosed\n"));
    expect(unparsable.report.checks[0]).toMatchObject({
      name: "config",
      status: "fail",
      detail: expect.stringContaining("not valid YAML")
    });
  });

  it("finds a journal that is not a SQLite file", async () => {
    const dataDir = tempDir("klaxon-fake-journal-");
    writeFileSync(join(dataDir, "journal.sqlite"), "not a database");
    const {report} = await doctor(writeConfig("fake-journal.yaml", goodConfig({dataDir})));
    expect(report.checks.find((check) => check.name === "journal")).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("is not a SQLite database")
    });
    rmSync(dataDir, {recursive: true, force: true});
  });

  it("finds damaged pages in a journal with integrity_check", async () => {
    const dataDir = tempDir("klaxon-damaged-journal-");
    const path = join(dataDir, "journal.sqlite");
    await new Journal({path, logger: createLogger("error", () => {})}).close();
    damageTablePage(path, "notifications");
    const {report} = await doctor(writeConfig("damaged-journal.yaml", goodConfig({dataDir})));
    expect(report.checks.find((check) => check.name === "journal")).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(new RegExp(`^${path} is damaged \\(integrity_check: .+\\); restore a backup$`))
    });
    rmSync(dataDir, {recursive: true, force: true});
  });

  it("fails naming the alerts that wait, for what, and why", async () => {
    const config = writeConfig("undeliverable.yaml", goodConfig());
    const recipient = await createRecipient(gw);
    const waiting = [await sendUndeliverable(gw, recipient), await sendUndeliverable(gw, recipient)];
    try {
      const {run, report, status} = await doctor(config);
      expect(run.code).toBe(1);
      expect(status).toMatchObject({undeliverable: "fail", "gateway journal": "ok", smtp: "ok"});
      expect(report.checks.find((check) => check.name === "undeliverable")!.detail).toBe(
        `2 alerts wait for their email step: ${SMTP_NOT_CONFIGURED.reason} (email, 2 waiting)`
      );
      const human = await runKlaxonAdmin(["doctor", "--config", config], {KLAXON_API_KEY: gw.adminKey});
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(
        /^FAIL\s+undeliverable\s+2 alerts wait for their email step: SMTP is not configured/m
      );
    } finally {
      for (const id of waiting) await setWaiting(gw, id, null);
    }
    expect((await doctor(config)).status.undeliverable).toBe("ok");
  });
});
