import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {spawn} from "node:child_process";
import {existsSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import {dirname, join} from "node:path";
import {
  ALL_CHANNELS_CONFIGURED,
  createRecipient,
  startTestGateway,
  tempDir,
  type TestGateway
} from "../support/gateway.js";

// Schemathesis is pinned in test/run-all.sh (npm test), which installs it into the project's .venv
// and names that interpreter in KLAXON_PYTHON; a plain `vitest run` uses .venv too once it exists.
const PYTHON =
  process.env.KLAXON_PYTHON ??
  [join(import.meta.dirname, "../../.venv/bin/python")].find((venv) => existsSync(venv)) ??
  "python3";
// Bounded so the whole run takes well under two minutes on two cores.
const EXAMPLES_PER_OPERATION = "25";
const SEED = "20261122";
const RUN_LIMIT_MS = 240_000;

let gw: TestGateway;
let configFile: string;

beforeAll(async () => {
  // The fuzzer hammers every endpoint and sends keyless requests on purpose (the ignored_auth
  // check): the limiters are tested in brute-force.test.ts, here they would only answer 429.
  // Every channel configured (on development drivers): with none, each alert the fuzzer sends
  // would wait for a channel and /readyz would rightly answer 503, which the fuzzer counts as a
  // server error; that answer is tested in test/ops/undeliverable.test.ts.
  gw = await startTestGateway({
    ...ALL_CHANNELS_CONFIGURED,
    rate_limit: {per_second: 1_000_000, burst: 1_000_000, auth_failures_per_minute: 1_000_000}
  });
  const recipient = await createRecipient(gw);
  const group = (
    await gw.call("POST", "/api/v1/groups", {body: {name: "Line 7", members: [recipient], strategy: "sequential"}})
  ).body.uuid as string;
  // Ids that exist, so most generated sends, groups, heartbeats and integrations are accepted and
  // go on to the code behind validation; the rest still draw random uuids.
  configFile = join(tempDir("klaxon-fuzz-"), "schemathesis.toml");
  writeFileSync(
    configFile,
    readFileSync(join(import.meta.dirname, "schemathesis.toml"), "utf8") +
      `\n[dictionaries.targets]\nvalues = ${JSON.stringify([recipient, group])}\n\n[parameters]\n` +
      ["body.recipient_uuid", "body.target", "body.members[*]"]
        .map((field) => `"${field}" = {dictionary = "targets", probability = 0.9}\n`)
        .join("")
  );
});
afterAll(async () => {
  await gw?.stop();
  if (configFile) rmSync(dirname(configFile), {recursive: true, force: true});
});

const CLI_ENTRY =
  "import sys; from schemathesis.cli import schemathesis; sys.argv[0] = 'schemathesis'; sys.exit(schemathesis())";

function runSchemathesis(args: string[]): Promise<{code: number | null; output: string}> {
  return new Promise((resolve, reject) => {
    // In the temp dir: schemathesis keeps a .schemathesis/ cache wherever it runs.
    // Through the interpreter, not the `schemathesis` script: a fresh pyenv has no shim for it until a rehash.
    const child = spawn(PYTHON, ["-c", CLI_ENTRY, ...args], {
      cwd: dirname(configFile),
      env: {...process.env, NO_COLOR: "1", SCHEMATHESIS_TELEMETRY: "false"}
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), RUN_LIMIT_MS);
    child.on("error", (error) =>
      reject(
        new Error(`schemathesis could not run (npm test installs schemathesis==4.32.5 into .venv): ${error.message}`)
      )
    );
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({code, output});
    });
  });
}

describe("fuzzing the API from its OpenAPI document", () => {
  it(
    "finds no server error and no answer outside the documented schema, with every check",
    async () => {
      const {code, output} = await runSchemathesis([
        "--config-file",
        configFile,
        "run",
        `${gw.url}/api/v1/openapi.json`,
        "--header",
        `X-API-Key: ${gw.adminKey}`,
        "--checks",
        "all",
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--max-examples",
        EXAMPLES_PER_OPERATION,
        "--seed",
        SEED,
        "--workers",
        "2",
        "--request-timeout",
        "20"
      ]);
      expect(code, output).toBe(0);
      // The run must have reached every operation, not stopped at loading the document.
      const [, selected, tested] = output.match(/Selected: (\d+)\/\d+\s+Tested: (\d+)/) ?? [];
      expect(Number(tested), output).toBeGreaterThan(50);
      expect(tested).toBe(selected);
      // Nothing the fuzzer sent made the gateway log an unexpected failure.
      expect(gw.logLines.filter((line) => line.includes('"request failed"'))).toEqual([]);
    },
    RUN_LIMIT_MS + 10_000
  );
});
