import {execFile} from "node:child_process";
import {rmSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {promisify} from "node:util";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {startTestGateway, tempDir, type TestGateway} from "../support/gateway.js";

const run = promisify(execFile);
const REDOCLY = join(process.cwd(), "node_modules", ".bin", "redocly");

interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  location?: Array<{pointer?: string}>;
}

let gw: TestGateway;
let dir: string;

beforeAll(async () => {
  gw = await startTestGateway();
  dir = tempDir("klaxon-openapi-");
});
afterAll(async () => {
  await gw.stop();
  rmSync(dir, {recursive: true, force: true});
});

describe("the OpenAPI document", () => {
  // Redocly's recommended rules (redocly.yaml): clients generate code from this document, so
  // every warning is a problem too.
  it("lints clean with @redocly/cli's recommended rules", async () => {
    const answer = await gw.call("GET", "/api/v1/openapi.json", {key: null});
    expect(answer.status).toBe(200);
    const file = join(dir, "openapi.json");
    writeFileSync(file, JSON.stringify(answer.body, null, 2));
    // Exit code 1 means problems were found; the JSON report on stdout lists them either way.
    const {stdout} = await run(
      REDOCLY,
      ["lint", "--format=json", "--config", join(process.cwd(), "redocly.yaml"), file],
      {
        env: {...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1"},
        maxBuffer: 16 * 1024 * 1024
      }
    ).catch((error: {stdout?: string; stderr?: string; code?: number}) => {
      if (!error.stdout) throw new Error(`redocly failed (exit ${error.code}): ${error.stderr}`);
      return {stdout: error.stdout};
    });
    const report = JSON.parse(stdout) as {problems: LintProblem[]};
    const problems = report.problems.map(
      (problem) =>
        `${problem.severity} ${problem.ruleId} at ${problem.location?.[0]?.pointer ?? "?"}: ${problem.message}`
    );
    expect(problems).toEqual([]);
  }, 60_000);

  // redocly.yaml turns operation-4xx-response off for the probes' sake; this holds it for the rest.
  it("documents a client error on every operation but the probes", async () => {
    const spec = (await gw.call("GET", "/api/v1/openapi.json", {key: null})).body as {
      paths: Record<string, Record<string, {responses: object}>>;
    };
    const without: string[] = [];
    for (const [path, operations] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!Object.keys(operation.responses).some((status) => /^4(\d\d|XX)$/.test(status)))
          without.push(`${method.toUpperCase()} ${path}`);
      }
    }
    // /readyz answers 401/403 to a bad key presented for its details.
    expect(without.sort()).toEqual(["GET /healthz", "GET /metrics"]);
  });

  it("tags every operation by area, each tag described, and marks the key-less ones public", async () => {
    const spec = (await gw.call("GET", "/api/v1/openapi.json", {key: null})).body as {
      tags: Array<{name: string; description?: string}>;
      paths: Record<string, Record<string, {tags?: string[]; summary?: string; security?: unknown[]}>>;
    };
    expect(spec.tags.every((tag) => /^[a-z]+$/.test(tag.name) && (tag.description ?? "").length > 20)).toBe(true);
    const declared = new Set(spec.tags.map((tag) => tag.name));
    for (const [path, operations] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect(operation.tags?.length, where).toBe(1);
        expect(declared.has(operation.tags![0]), where).toBe(true);
        expect(operation.summary, where).toBeTruthy();
        if (!path.startsWith("/api/v1/")) expect(operation.security, where).toEqual([]);
      }
    }
    expect(spec.paths["/healthz"].get.tags).toEqual(["health"]);
    expect(spec.paths["/ping/{token}"].post.tags).toEqual(["pings"]);
    expect(spec.paths["/api/v1/audit"].get.tags).toEqual(["audit"]);
  });
});
