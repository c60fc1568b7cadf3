import {parseArgs} from "node:util";
import {ApiClient} from "./api-client.js";
import {PROGRAM, type Command, type CommandContext, type OptionSpec, type OptionValues} from "./command.js";
import {CliError, EXIT, UsageError, type ExitCode} from "./failures.js";
import {jsonText, scrub, type Output} from "./output.js";
import {notificationCommands} from "./commands/notifications.js";
import {recipientCommands} from "./commands/recipients.js";
import {groupCommands} from "./commands/groups.js";
import {policyCommands} from "./commands/policies.js";
import {keyCommands} from "./commands/keys.js";
import {heartbeatCommands} from "./commands/heartbeat.js";
import {operationsCommands} from "./commands/operations.js";
import {doctorCommand} from "./commands/doctor.js";
import {backupCommands} from "./commands/backup.js";
import {restoreCommand} from "./commands/restore.js";

declare const KLAXON_CLI_VERSION: string | undefined;

const DEFAULT_URL = "http://127.0.0.1:8080";
const DEFAULT_RETRIES = 3;
const DEFAULT_TIMEOUT_SECONDS = 10;

const COMMANDS: Command[] = [
  ...notificationCommands,
  ...recipientCommands,
  ...groupCommands,
  ...policyCommands,
  ...keyCommands,
  ...operationsCommands,
  ...heartbeatCommands,
  doctorCommand,
  ...backupCommands,
  restoreCommand
];

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: {type: "string", value: "URL", description: `the gateway (default: $KLAXON_URL, else ${DEFAULT_URL})`},
  "api-key": {type: "string", value: "KEY", description: "the API key (default: $KLAXON_API_KEY)"},
  json: {type: "boolean", description: "print the API's JSON instead of the human form"},
  retries: {
    type: "string",
    value: "N",
    description: `repeats after a server or network error (default: $KLAXON_RETRIES, else ${DEFAULT_RETRIES})`
  },
  timeout: {type: "string", value: "SECONDS", description: `per-request timeout (default ${DEFAULT_TIMEOUT_SECONDS})`},
  help: {type: "boolean", short: "h", description: "show help"}
};

export interface CliEnvironment {
  env: Record<string, string | undefined>;
  output: Output;
}

function version(): string {
  return typeof KLAXON_CLI_VERSION === "string" ? KLAXON_CLI_VERSION : "dev";
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  const entries = Object.entries(options).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.type === "string" ? ` ${spec.value ?? "VALUE"}` : ""}`;
    return [flag, spec.description + (spec.multiple ? " (repeatable)" : "")];
  });
  const width = Math.max(...entries.map(([flag]) => flag.length));
  return entries.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`);
}

function synopsis(command: Command): string {
  return [PROGRAM, ...command.words, command.args, command.options ? "[flags]" : undefined].filter(Boolean).join(" ");
}

function overview(prefix: string[] = []): string {
  const shown = COMMANDS.filter((command) => prefix.every((word, i) => command.words[i] === word));
  const width = Math.max(...shown.map((command) => command.words.join(" ").length));
  return [
    `${PROGRAM}: administer a Klaxon gateway on its box, and send and manage its alerts`,
    "",
    `usage: ${PROGRAM} ${prefix.length ? prefix.join(" ") + " " : ""}<command> [flags]`,
    "",
    "commands:",
    ...shown.map((command) => `  ${command.words.join(" ").padEnd(width)}  ${command.summary}`),
    "",
    "global flags:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    "exit codes: 0 ok, 1 refused or check failed, 2 usage or invalid input, 3 not found,",
    "            4 authentication or permission, 5 server or network error after retries",
    "",
    `\`${PROGRAM} <command> --help\` describes a command.`
  ].join("\n");
}

function commandHelp(command: Command): string {
  const lines = [`usage: ${synopsis(command)}`, "", command.summary];
  if (command.options) lines.push("", "flags:", ...optionLines(command.options));
  lines.push("", "global flags:", ...optionLines(GLOBAL_OPTIONS));
  return lines.join("\n");
}

/** The command named by the leading words of argv (the longest match), and the rest of argv. */
function findCommand(argv: string[]): {command: Command; rest: string[]} | null {
  const matches = COMMANDS.filter((command) => command.words.every((word, i) => argv[i] === word));
  matches.sort((a, b) => b.words.length - a.words.length);
  return matches[0] ? {command: matches[0], rest: argv.slice(matches[0].words.length)} : null;
}

function parse(command: Command, rest: string[]): {values: OptionValues; positionals: string[]} {
  const options = {...GLOBAL_OPTIONS, ...command.options};
  try {
    const parsed = parseArgs({args: rest, options, allowPositionals: true, strict: true});
    return {values: parsed.values as OptionValues, positionals: parsed.positionals};
  } catch (error) {
    throw new UsageError((error as Error).message.split("\n")[0]);
  }
}

function positiveInteger(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

function contextFor(
  command: Command,
  values: OptionValues,
  positionals: string[],
  {env, output}: CliEnvironment
): CommandContext {
  const [min, max] = command.arity ?? [0, 0];
  if (positionals.length < min) throw new UsageError(`missing argument: ${synopsis(command)}`);
  if (positionals.length > max) throw new UsageError(`unexpected argument "${positionals[max]}": ${synopsis(command)}`);
  const baseUrl = (values.url as string | undefined) ?? env.KLAXON_URL ?? DEFAULT_URL;
  const retries = positiveInteger(
    (values.retries as string | undefined) ?? env.KLAXON_RETRIES,
    "--retries",
    DEFAULT_RETRIES
  );
  const timeoutMs = positiveInteger(values.timeout as string | undefined, "--timeout", DEFAULT_TIMEOUT_SECONDS) * 1000;
  if (!/^https?:\/\//.test(baseUrl))
    throw new UsageError(`the gateway URL must start with http:// or https://, got "${baseUrl}"`);
  let client: ApiClient | null = null;
  return {
    positionals,
    values,
    json: values.json === true,
    env,
    output,
    baseUrl,
    api() {
      const apiKey = (values["api-key"] as string | undefined) ?? env.KLAXON_API_KEY;
      if (!apiKey) throw new CliError("no API key: pass --api-key or set KLAXON_API_KEY", EXIT.auth);
      client ??= new ApiClient({baseUrl, apiKey, retries, timeoutMs, onRetry: (note) => output.err(note)});
      return client;
    }
  };
}

/** Runs one command line and returns the exit code; never throws. */
export async function runCli(argv: string[], environment: CliEnvironment): Promise<ExitCode> {
  const {output} = environment;
  let json = argv.includes("--json");
  const secrets = givenSecrets(argv, environment.env);
  try {
    if (argv[0] === "--version" || argv[0] === "version") {
      output.out(version());
      return EXIT.ok;
    }
    const found = findCommand(argv);
    if (!found) {
      const group = COMMANDS.filter((command) => command.words[0] === argv[0]).length ? [argv[0]] : [];
      const asksHelp = argv.length === 0 || argv[0] === "help" || argv.includes("--help") || argv.includes("-h");
      if (asksHelp) {
        output.out(overview(group));
        return EXIT.ok;
      }
      output.err(overview(group));
      throw new UsageError(
        group.length ? `unknown ${group[0]} command "${argv[1] ?? ""}"` : `unknown command "${argv[0]}"`
      );
    }
    const {values, positionals} = parse(found.command, found.rest);
    json = values.json === true;
    if (values.help) {
      output.out(commandHelp(found.command));
      return EXIT.ok;
    }
    await found.command.run(contextFor(found.command, values, positionals, environment));
    return EXIT.ok;
  } catch (error) {
    const failure =
      error instanceof CliError
        ? error
        : new CliError(`unexpected error: ${(error as Error)?.message ?? String(error)}`, EXIT.failed);
    if (json && failure.problem) output.out(jsonText(failure.problem));
    output.err(`error: ${scrub(failure.message, secrets)}`);
    if (failure instanceof UsageError)
      output.err(`\`${PROGRAM} --help\` lists the commands; \`${PROGRAM} <command> --help\` their flags.`);
    return failure.exitCode;
  }
}

/** The API key this run was given, in any of its forms, so no message can echo it. */
function givenSecrets(argv: string[], env: Record<string, string | undefined>): string[] {
  const flagAt = argv.indexOf("--api-key");
  const inline = argv.find((arg) => arg.startsWith("--api-key="))?.slice("--api-key=".length);
  return [env.KLAXON_API_KEY, flagAt >= 0 ? argv[flagAt + 1] : undefined, inline].filter(
    (value): value is string => !!value
  );
}
