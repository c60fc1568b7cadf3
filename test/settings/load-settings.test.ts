import {describe, expect, it} from "vitest";
import {writeFileSync} from "node:fs";
import {join} from "node:path";
import {loadSettings, SettingsError} from "../../src/settings/load-settings.js";
import {DEFAULT_SETTINGS} from "../../src/settings/defaults.js";
import {tempDir} from "../support/gateway.js";

function configFile(yaml: string): string {
  const path = join(tempDir(), "klaxon.yaml");
  writeFileSync(path, yaml);
  return path;
}

describe("settings", () => {
  it("runs on embedded defaults with no file and no environment", () => {
    const {settings, configFile: file} = loadSettings({});
    expect(file).toBeNull();
    expect(settings).toEqual(DEFAULT_SETTINGS);
    expect(settings.port).toBe(8080);
    expect(settings.data_dir).toBe("./data");
  });

  it("layers the config file over the defaults and the environment over both", () => {
    const file = configFile("port: 9000\nsmtp:\n  host: mail.lan\n  port: 25\nmodem:\n  profile: quectel\n");
    const {settings} = loadSettings({
      KLAXON_CONFIG: file,
      KLAXON_SMTP_PORT: "2525",
      KLAXON_SMTP_SECURE: "true",
      KLAXON_TELEGRAM_BOT_TOKEN: "123:abc",
      KLAXON_DATA_DIR: "/var/lib/klaxon"
    });
    expect(settings.port).toBe(9000);
    expect(settings.smtp).toMatchObject({host: "mail.lan", port: 2525, secure: true});
    expect(settings.modem.profile).toBe("quectel");
    expect(settings.telegram.bot_token).toBe("123:abc");
    expect(settings.data_dir).toBe("/var/lib/klaxon");
    expect(settings.rate_limit.burst).toBe(200);
  });

  it.each([
    [{KLAXON_PORT: "eighty"}, /KLAXON_PORT: expected a number/],
    [{KLAXON_PORT: "70000"}, /port: must be 0..65535/],
    [{KLAXON_SMTP_SECURE: "maybe"}, /expected true or false/],
    [{KLAXON_MODEM_PROFILE: "huawei"}, /modem.profile: must be one of sim800, sim7600, quectel/],
    [{KLAXON_PUBLIC_URL: "klaxon.lan"}, /public_url: must be an absolute http\(s\) URL/]
  ])("refuses bad environment values %j", (env, message) => {
    expect(() => loadSettings(env)).toThrow(SettingsError);
    expect(() => loadSettings(env)).toThrow(message);
  });

  it("refuses an unknown setting in the file, naming it", () => {
    const file = configFile("smtp:\n  hostname: mail.lan\n");
    expect(() => loadSettings({KLAXON_CONFIG: file})).toThrow(`config file ${file}: unknown setting "smtp.hostname"`);
  });

  it("refuses an unknown KLAXON_ variable in the environment, naming the closest setting", () => {
    expect(() => loadSettings({KLAXON_SMTP_HOTS: "mail.lan"})).toThrow(
      "unknown environment variable KLAXON_SMTP_HOTS: did you mean KLAXON_SMTP_HOST?"
    );
    expect(() => loadSettings({KLAXON_DATADIR: "/srv"})).toThrow("did you mean KLAXON_DATA_DIR?");
  });

  it("starts with the variables other tools read and with non-Klaxon variables", () => {
    const {settings} = loadSettings({
      KLAXON_URL: "http://box:8080",
      KLAXON_API_KEY: "klx_x",
      KLAXON_RETRIES: "3",
      HOME: "/root",
      KLAXONISH: "1"
    });
    expect(settings).toEqual(DEFAULT_SETTINGS);
  });

  it("refuses a config file that is not YAML or cannot be read", () => {
    expect(() => loadSettings({KLAXON_CONFIG: configFile("port: [1,\n")})).toThrow(/is not valid YAML/);
    expect(() => loadSettings({KLAXON_CONFIG: "/nonexistent/klaxon.yaml"})).toThrow(/cannot read config file/);
  });

  it("parses the shipped sample config to exactly the defaults", () => {
    const {settings} = loadSettings({KLAXON_CONFIG: join(import.meta.dirname, "../../config/klaxon.yaml")});
    expect(settings).toEqual(DEFAULT_SETTINGS);
  });
});
