import {journalStream, loadSettings} from "./settings/load-settings.js";
import {createLogger, logFormatFor} from "./lib/logger.js";
import {startGateway} from "./gateway.js";
import {SystemdNotifier} from "./ops/systemd-notify.js";
import {Watchdog} from "./ops/watchdog.js";

// Before the settings are read (they may be what fails), the prefix follows stdout alone.
const bootLogger = createLogger("info", undefined, {}, logFormatFor("auto", journalStream()));

async function main(): Promise<void> {
  const {settings, configFile} = loadSettings();
  const logger = createLogger(settings.log.level, undefined, {}, logFormatFor(settings.log.syslog_prefix, journalStream()));
  logger.info("starting klaxon", {config_file: configFile ?? "(none: embedded defaults and environment)", host: settings.host, port: settings.port});
  const gateway = await startGateway(settings, {logger});
  // Under systemd (Type=notify): ready once serving, then watchdog pings while the liveness probe passes.
  const systemd = SystemdNotifier.fromEnvironment(logger);
  await systemd.ready(`serving on ${gateway.url}`);
  const watchdogMs = systemd.watchdogIntervalMs;
  const watchdog = watchdogMs === null ? null : new Watchdog(systemd, gateway.operations.liveness, watchdogMs, logger);
  watchdog?.start();
  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    logger.info("shutting down", {signal});
    void systemd.stopping();
    const stopped = watchdog ? watchdog.stop().then(() => gateway.stop()) : gateway.stop();
    stopped.then(
      () => process.exit(0),
      (error) => {
        logger.error("unclean shutdown", {error});
        process.exit(1);
      }
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

main().catch((error) => {
  bootLogger.error("klaxon failed to start", {error: error as Error});
  process.exit(1);
});
