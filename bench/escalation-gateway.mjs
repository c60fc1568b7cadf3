// A built gateway (dist/) whose channels answer at once and deliver nothing, for the restart part
// of bench/escalation.bench.mjs: the figures are the runner's, not a peer's. Prints one line
// "serving <url>" when it serves; SIGTERM stops it cleanly.
//
// Usage: node bench/escalation-gateway.mjs <data dir> <port>

import {startGateway} from "../dist/boot/gateway.js";
import {settingsWith} from "../dist/settings/load-settings.js";
import {createLogger} from "../dist/lib/logger.js";
import {CHANNELS} from "../dist/domain/vocabulary.js";

/** Answers every delivery at once; many at a time, so the channel is never the bottleneck. */
export class InstantDriver {
  concurrency = 256;
  constructor(channel, onDeliver = () => {}) {
    this.channel = channel;
    this.onDeliver = onDeliver;
  }
  unavailableReason() {
    return null;
  }
  async deliver(delivery) {
    this.onDeliver(delivery);
    return {outcome: "sent", detail: "benchmark driver: nothing delivered"};
  }
}

export function benchSettings(dataDir, port = 0) {
  return settingsWith({
    host: "127.0.0.1",
    port,
    data_dir: dataDir,
    log: {level: "warn"},
    rate_limit: {per_second: 1_000_000, burst: 1_000_000},
    smtp: {host: "127.0.0.1", from: "bench@klaxon.lan"},
    modem: {port: "/dev/klaxon-bench"},
    telegram: {bot_token: "bench"}
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dataDir, port] = process.argv.slice(2);
  const gateway = await startGateway(benchSettings(dataDir, Number(port)), {
    logger: createLogger("warn"),
    drivers: CHANNELS.map((channel) => new InstantDriver(channel))
  });
  process.stdout.write(`serving ${gateway.url}\n`);
  process.once("SIGTERM", () => void gateway.stop().then(() => process.exit(0)));
}
