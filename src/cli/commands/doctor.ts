import {loadSettings, type LoadedSettings} from "../../settings/load-settings.js";
import {SECRET_SETTINGS, type Settings} from "../../settings/defaults.js";
import {printResult, stringOption, type Command} from "../command.js";
import {CliError, EXIT} from "../failures.js";
import {scrub, tableText} from "../output.js";
import {
  checkDataDir,
  checkGateway,
  checkJournal,
  checkModemPort,
  checkSmtp,
  checkTelegram,
  type CheckResult
} from "./doctor-checks.js";

function secretValues(settings: Settings, env: Record<string, string | undefined>): string[] {
  const fromSettings = SECRET_SETTINGS.map((path) => {
    const [section, key] = path.split(".");
    const value = (settings as unknown as Record<string, Record<string, unknown>>)[section][key];
    return typeof value === "string" ? value : "";
  });
  return [...fromSettings, env.KLAXON_API_KEY ?? ""].filter((value) => value.length > 0);
}

/** Loads the settings the gateway would load; a config file that does not parse is the first failure. */
function configCheck(env: Record<string, string | undefined>): {loaded: LoadedSettings | null; result: CheckResult} {
  try {
    const loaded = loadSettings(env);
    const detail = loaded.configFile
      ? `${loaded.configFile} is valid`
      : "no config file (KLAXON_CONFIG unset): defaults and environment";
    return {loaded, result: {name: "config", status: "ok", detail}};
  } catch (error) {
    return {loaded: null, result: {name: "config", status: "fail", detail: (error as Error).message}};
  }
}

const MARK: Record<CheckResult["status"], string> = {ok: "ok", warn: "warn", fail: "FAIL", skip: "skip"};

export const doctorCommand: Command = {
  words: ["doctor"],
  summary: "check the installation: config, data dir, journal, gateway, modem, SMTP login, Telegram token",
  options: {
    config: {type: "string", value: "FILE", description: "the config file to check (default: $KLAXON_CONFIG)"}
  },
  async run(ctx) {
    const configFile = stringOption(ctx, "config");
    const env: Record<string, string | undefined> = configFile ? {...ctx.env, KLAXON_CONFIG: configFile} : ctx.env;
    const {loaded, result} = configCheck(env);
    const results: CheckResult[] = [result];
    if (loaded) {
      const {settings} = loaded;
      const baseUrl = ctx.values.url ? ctx.baseUrl : (env.KLAXON_URL ?? `http://127.0.0.1:${settings.port}`);
      results.push(
        ...checkDataDir(settings),
        await checkJournal(settings),
        ...(await checkGateway(
          settings,
          baseUrl,
          stringOption(ctx, "api-key") ?? env.KLAXON_API_KEY,
          loaded.configFile ?? "no config file: KLAXON_CONFIG unset, defaults and environment"
        )),
        checkModemPort(settings)
      );
      results.push(...(await Promise.all([checkSmtp(settings), checkTelegram(settings)])));
      const secrets = secretValues(settings, env);
      for (const check of results) check.detail = scrub(check.detail, secrets);
    }
    const healthy = results.every((check) => check.status !== "fail");
    printResult(
      ctx,
      {ok: healthy, checks: results},
      () =>
        tableText(
          ["", "CHECK", "DETAIL"],
          results.map((check) => [MARK[check.status], check.name, check.detail])
        ) + `\n\n${healthy ? "no problems found" : "problems found"}`
    );
    if (!healthy)
      throw new CliError(`${results.filter((check) => check.status === "fail").length} check(s) failed`, EXIT.failed);
  }
};
