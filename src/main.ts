import {loadSettings} from "./settings/load-settings.js";
import {createLogger} from "./lib/logger.js";
import {startGateway} from "./gateway.js";

const bootLogger = createLogger("info");

async function main(): Promise<void> {
  const {settings, configFile} = loadSettings();
  const logger = createLogger(settings.log.level);
  logger.info("starting klaxon", {config_file: configFile ?? "(none: embedded defaults and environment)", host: settings.host, port: settings.port});
  const gateway = await startGateway(settings, {logger});
  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    logger.info("shutting down", {signal});
    gateway.stop().then(
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
