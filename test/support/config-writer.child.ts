// A child process for the crash test: rewrites the config file as fast as it can until it is
// killed, printing each sequence number after its write has returned.
import {AtomicJsonFile} from "../../src/store/config/atomic-json-file.js";

const file = new AtomicJsonFile<{seq: number; padding: string}>(process.argv[2]);
const padding = "x".repeat(20_000);
for (let seq = 1; ; seq++) {
  await file.write({seq, padding});
  process.stdout.write(`${seq}\n`);
}
