import {runCli} from "./cli.js";
import {processOutput} from "./output.js";

// The entry point of klaxon-admin's bundle (npm run build:admin-cli): everything else is testable without a process.
// runCli answers every failure with an exit code; were it to reject anyway, Node reports it and exits 1.
void runCli(process.argv.slice(2), {env: process.env, output: processOutput}).then((code) => {
  process.exitCode = code;
});
