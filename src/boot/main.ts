import {createServer} from "node:net";
import {journalStream, loadSettings, SettingsError} from "../settings/load-settings.js";
import {createLogger, logFormatFor} from "../lib/logger.js";
import {startGateway} from "./gateway.js";
import type {LivenessProbe} from "../ops/liveness.js";
import {startBox} from "./standby.js";
import {SystemdNotifier} from "../ops/systemd-notify.js";
import {Watchdog} from "../ops/watchdog.js";
import {IdleTrim} from "../ops/idle-trim.js";
import {CorruptConfigError} from "../store/config/atomic-json-file.js";
import {WalLossError} from "../store/journal/wal-guard.js";
import {NewerJournalError} from "../store/journal/migrations.js";
import {JournalRefusedError} from "../store/journal/journal-identity.js";
import {ACCEPT_JOURNAL_LOSS} from "../store/journal-record.js";
import type {Settings} from "../settings/defaults.js";

// Before the settings are read (they may be what fails), the prefix follows stdout alone.
const bootLogger = createLogger("info", undefined, {}, logFormatFor("auto", journalStream()));

/** Serve although the journal's WAL was lost at an unclean stop (docs/operations.md). */
const ACCEPT_WAL_LOSS = "--accept-wal-loss";
/** The arguments main takes; ACCEPT_JOURNAL_LOSS (store/journal-record.ts) accepts a lost WAL too. */
const FLAGS = [ACCEPT_WAL_LOSS, ACCEPT_JOURNAL_LOSS];
/** `--port N`: the HTTP port for this start, as KLAXON_PORT=N would set it (and winning over it). */
const PORT = "--port";
/**
 * Every file the gateway and its children (Litestream) make is private to the service user, whatever
 * umask it was started under: backups and the standby's copy hold every secret (issue 29).
 */
const PRIVATE_FILES_UMASK = 0o077;
/**
 * Exit status of a start refused until someone acts (a setting, a damaged or missing data file):
 * sysexits' EX_CONFIG, which the systemd unit does not restart on. Anything else exits 1.
 */
const EXIT_REFUSED = 78;

class UsageError extends Error {
  override name = "UsageError";
}

function parseArguments(argv: string[]): {acceptWalLoss: boolean; acceptJournalLoss: boolean; port?: string} {
  const at = argv.indexOf(PORT);
  const port = at === -1 ? undefined : argv[at + 1];
  if (at !== -1 && !port) throw new UsageError(`${PORT} needs a port number, e.g. ${PORT} 8081`);
  const flags = at === -1 ? argv : argv.filter((_, index) => index !== at && index !== at + 1);
  const unknown = flags.filter((argument) => !FLAGS.includes(argument));
  if (unknown.length)
    throw new UsageError(`unknown argument ${unknown[0]}; the only ones are ${[...FLAGS, `${PORT} N`].join(", ")}`);
  return {acceptWalLoss: argv.includes(ACCEPT_WAL_LOSS), acceptJournalLoss: argv.includes(ACCEPT_JOURNAL_LOSS), port};
}

/** The settings each listening port comes from, so a port in use names the one to change. */
let listeningSettings: Settings | null = null;

/**
 * A port in use said in words with the setting to change (the HTTP port's with its variable and
 * flag); any other error as it is.
 */
function describeFailure(error: Error): string {
  const {code, port} = error as NodeJS.ErrnoException & {port?: number};
  if (code !== "EADDRINUSE") return error.message;
  const settings = listeningSettings;
  const setting =
    settings && port === settings.snmp.trap_port
      ? "snmp.trap_port (KLAXON_SNMP_TRAP_PORT)"
      : settings && port === settings.inbound_email.port
        ? "inbound_email.port (KLAXON_INBOUND_EMAIL_PORT)"
        : `port: KLAXON_PORT=<port> or \`npm start -- ${PORT} <port>\``;
  return `port ${port ?? "?"} is already in use by another program (${error.message}): stop that program or choose another port with ${setting}`;
}

/**
 * Binds the HTTP port for a moment and lets it go, before the data dir is touched: a second
 * `npm start` beside a running gateway must fail on its port without opening that gateway's journal
 * (its start would take over the journal's open marker and remove it on the way out, and the running
 * gateway would lose its unclean-stop detection). Rejects with the listen error (EADDRINUSE, port kept).
 */
function probePort(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen({host, port, exclusive: true}, () => probe.close(() => resolve()));
  });
}

async function main(): Promise<void> {
  const {acceptWalLoss, acceptJournalLoss, port} = parseArguments(process.argv.slice(2));
  process.umask(process.umask() | PRIVATE_FILES_UMASK);
  const {settings, configFile} = loadSettings(port === undefined ? process.env : {...process.env, KLAXON_PORT: port});
  listeningSettings = settings;
  const logger = createLogger(
    settings.log.level,
    undefined,
    {},
    logFormatFor(settings.log.syslog_prefix, journalStream())
  );
  // Heard from the first moment: a stop asked for while the gateway is still starting (its last steps
  // come after "gateway serving") waits for the start to finish, then stops it cleanly. Before the
  // first line: stdout to a pipe is written at once, so whoever reads "starting klaxon" and signals
  // must find the handler already there, or the default action kills the process.
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => resolve(signal));
  });
  logger.info("starting klaxon", {
    config_file: configFile ?? "(none: embedded defaults and environment)",
    host: settings.host,
    port: settings.port
  });
  void signalled.then((signal) => logger.info("shutting down", {signal}));
  await probePort(settings.host, settings.port);
  // One of two boxes may start as the standby, and become a gateway only when it takes over.
  const box =
    settings.replication.role === "off"
      ? await startGateway(settings, {logger, acceptWalLoss, acceptJournalLoss}).then((gateway) => ({
          gateway: () => gateway,
          url: () => gateway.url,
          takenOver: new Promise<never>(() => undefined),
          stop: () => gateway.stop()
        }))
      : await startBox(settings, {logger, acceptWalLoss, acceptJournalLoss});
  // Under systemd (Type=notify): ready once serving, then watchdog pings while the liveness probe passes.
  const systemd = SystemdNotifier.fromEnvironment(logger);
  await systemd.ready(`serving on ${box.url()}`);
  // Start-up's leftovers given back once the gateway is quiet (with the unit's --expose-gc).
  const idleTrim = IdleTrim.forProcess(logger);
  idleTrim?.start();
  const watchdogMs = systemd.watchdogIntervalMs;
  // Typed by hand: the assignments happen in closures, which narrowing does not see.
  let watchdog = null as Watchdog | null;
  const watch = (probe: Pick<LivenessProbe, "check">) => {
    if (watchdogMs !== null) watchdog = new Watchdog(systemd, probe, watchdogMs, logger);
    watchdog?.start();
  };
  const serving = box.gateway();
  if (serving) watch(serving.operations.liveness);
  else {
    // A standby has no journal or runner to be stuck: its event loop answering the ping is its liveness.
    watch({check: () => Promise.resolve({alive: true, failures: []})});
    void box.takenOver.then(async (gateway) => {
      await watchdog?.stop();
      watch(gateway.operations.liveness);
    });
  }
  await signalled;
  void systemd.stopping();
  try {
    await idleTrim?.stop();
    await watchdog?.stop();
    await box.stop();
  } catch (error) {
    logger.error("unclean shutdown", {error});
    process.exit(1);
  }
  process.exit(0);
}

main().catch((thrown: unknown) => {
  const error = thrown instanceof Error ? thrown : new Error(String(thrown));
  const refused = [
    UsageError,
    SettingsError,
    CorruptConfigError,
    WalLossError,
    NewerJournalError,
    JournalRefusedError
  ].some((kind) => error instanceof kind);
  // The structured line for the journal, and one plain line on stderr for whoever ran it by hand.
  bootLogger.error("klaxon failed to start", {error});
  process.stderr.write(`klaxon: cannot start: ${describeFailure(error).replace(/\s*\n\s*/g, " ")}\n`);
  process.exit(refused ? EXIT_REFUSED : 1);
});
