import {readFileSync} from "node:fs";
import {dirname, join, resolve} from "node:path";
import {fileURLToPath} from "node:url";
import ts from "typescript";
import {describe, expect, it} from "vitest";

// Idle footprint (issue 36, docs/benchmarks.md): what a feature needs is loaded when it is
// configured (a dynamic import()), not by every gateway. Checked on the source's import graph:
// the modules a default start loads are those reached from src/main.ts through static, runtime
// imports (type-only imports are erased by the compiler; dynamic imports wait until called).

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src");

/** The runtime, static import specifiers of one TypeScript file. */
function staticImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const named = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            named !== undefined &&
            ts.isNamedImports(named) &&
            named.elements.length > 0 &&
            named.elements.every((element) => element.isTypeOnly)));
      if (!onlyTypes) specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly) {
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return specifiers;
}

/**
 * What a start from `entry` loads through static imports: our own modules (paths under src/) and
 * packages ("mqtt", "@tsed/di", ...).
 */
function loadedFrom(entry: string): {files: string[]; packages: Set<string>} {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith(".")) pending.push(resolve(dirname(file), specifier.replace(/\.js$/, ".ts")));
      else if (!specifier.startsWith("node:"))
        packages.add(
          specifier
            .split("/")
            .slice(0, specifier.startsWith("@") ? 2 : 1)
            .join("/")
        );
    }
  }
  return {files: [...seen].map((file) => file.slice(SRC.length + 1)), packages};
}

describe("the entry trims node:http before anything imports it", () => {
  it("imports nothing statically but node:module, and loads the gateway after", () => {
    // An ES module import of node:http anywhere in the entry's static graph would load undici
    // (about 5 MB) before the entry's first line runs.
    expect(staticImports(join(SRC, "main.ts"))).toEqual(["node:module"]);
    expect(readFileSync(join(SRC, "main.ts"), "utf8")).toContain('await import("./boot/main.js")');
  });
});

describe("a gateway's start loads only what is configured", () => {
  const {files, packages: loaded} = loadedFrom(join(SRC, "boot", "main.ts"));

  it("reaches the packages every gateway needs (the walk follows the imports)", () => {
    expect(loaded).toContain("better-sqlite3");
    expect(loaded).toContain("@tsed/platform-express");
  });

  it("loads no MQTT, SNMP, SMTP intake or mail library unless its feature is configured", () => {
    const deferred = ["mqtt", "net-snmp", "mailparser", "smtp-server", "nodemailer"];
    expect(deferred.filter((name) => loaded.has(name))).toEqual([]);
  });

  it("loads no PLC driver unless a Modbus or OPC UA integration exists", () => {
    expect(["modbus-serial", "node-opcua-client"].filter((name) => loaded.has(name))).toEqual([]);
  });

  it("gives start-up's leftovers back once quiet (ops/idle-trim.ts, with the unit's --expose-gc)", () => {
    expect(files).toContain("ops/idle-trim.ts");
    const unit = readFileSync(join(SRC, "..", "systemd", "klaxon.service"), "utf8");
    expect(unit).toMatch(/^ExecStart=\S+ (--\S+ )*--expose-gc (--\S+ )*\S+main\.js$/m);
  });

  it("loads libphonenumber when a number is first checked, not at start", () => {
    expect([...loaded].filter((name) => name.startsWith("libphonenumber-js"))).toEqual([]);
  });

  it("loads a channel's driver (the modem's session, Telegram's poller, SMTP) only when the channel is configured", () => {
    const drivers = ["modem/modem.ts", "channels/telegram/updates-poller.ts", "channels/email/email.driver.ts"];
    expect(drivers.filter((file) => files.includes(file))).toEqual([]);
  });
});
