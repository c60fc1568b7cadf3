import {beforeAll, describe, expect, it} from "vitest";
import {spawn, spawnSync} from "node:child_process";
import {existsSync, readdirSync, readFileSync} from "node:fs";
import {join} from "node:path";
import {install, ROOT, useRelease} from "../support/install-rig.js";

// The arm64 release (a Raspberry Pi's) made on this machine, installed into a staged root and run
// as its systemd unit would run it, with its own arm64 Node; on an x64 machine under qemu-user
// with Debian's arm64 cross libraries as the sysroot (the Node binary and the native modules are
// linked against glibc and libstdc++). Emulation is slow: a start takes tens of seconds.
const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
const SYSROOT = "/usr/aarch64-linux-gnu";
const QEMU = ["qemu-aarch64-static", "qemu-aarch64"].find((cmd) => spawnSync(cmd, ["--version"]).status === 0);
/** The command prefix that runs an arm64 program here. */
const EMULATOR = process.arch === "arm64" ? [] : [QEMU ?? "qemu-aarch64-static", "-L", SYSROOT];
const START_LIMIT_MS = 240_000;
/** ELF e_machine of AArch64. */
const EM_AARCH64 = 183;

beforeAll(() => {
  if (EMULATOR.length && (!QEMU || !existsSync(join(SYSROOT, "lib/libstdc++.so.6"))))
    throw new Error(
      "running the arm64 release here needs qemu-aarch64-static (qemu-user-static) and the arm64 sysroot in " +
        `${SYSROOT} (libstdc++6-arm64-cross): npm test installs both as root`
    );
});
// One arm64 release for the file, made exactly as `npm run package -- --arch arm64` makes it.
const {release, tempDir: scratchDir} = useRelease("arm64");

const elfMachine = (path: string) => readFileSync(path).readUInt16LE(18);

/** The staged unit's ExecStart, its /opt/klaxon paths moved into the staged root. */
function execStart(root: string): string[] {
  const unit = readFileSync(join(root, "etc/systemd/system/klaxon.service"), "utf8");
  const line = /^ExecStart=(.+)$/m.exec(unit)![1];
  return line.split(" ").map((word) => word.replace(/^\/opt\/klaxon\//, `${root}/opt/klaxon/`));
}

interface Started {
  url: string;
  /** From the spawn to the "gateway serving" log line. */
  startupMs: number;
  stop: () => Promise<number | null>;
}

/** Starts the installed gateway as its unit does (its Node, flags, working dir, environment), emulated. */
async function startInstalled(root: string, dataDir: string): Promise<Started> {
  const [node, ...args] = execStart(root);
  const began = performance.now();
  const child = spawn(EMULATOR[0] ?? node, [...EMULATOR.slice(1), ...(EMULATOR.length ? [node] : []), ...args], {
    cwd: join(root, "opt/klaxon"),
    env: {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "production",
      KLAXON_CONFIG: join(root, "etc/klaxon/klaxon.yaml"),
      KLAXON_DATA_DIR: dataDir,
      KLAXON_HOST: "127.0.0.1",
      KLAXON_PORT: "0"
    },
    stdio: ["ignore", "pipe", "pipe"]
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the emulated gateway did not serve within ${START_LIMIT_MS} ms:\n${output.join("")}`));
    }, START_LIMIT_MS);
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      output.push(chunk.toString());
      const serving = /^\{.*"gateway serving".*\}$/m.exec(output.join(""));
      if (serving) {
        clearTimeout(timer);
        resolve(JSON.parse(serving[0]).url);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the emulated gateway exited with ${code}:\n${output.join("")}`));
    });
  });
  return {
    url,
    startupMs: performance.now() - began,
    stop: () => {
      child.kill("SIGTERM");
      return exited;
    }
  };
}

describe("the arm64 release", () => {
  // install.sh reads RELEASE, the tarball's first file, and stops there: nothing else is unpacked.
  it("is refused by a box of the other CPU before anything is installed", {timeout: 60_000}, () => {
    expect(release.tarball.endsWith(`/klaxon-${VERSION}-linux-arm64.tar.gz`)).toBe(true);
    const root = scratchDir("klaxon-root-");
    const refused = install(["--root", root, "--arch", "x64", "--offline", release.tarball]);
    expect(refused.stderr).toBe(
      `install.sh: this release is for linux-arm64, but this box is x64; install klaxon-${VERSION}-linux-x64.tar.gz (npm run package -- --arch x64)\n`
    );
    expect(refused.status).toBe(1);
    // Without --arch the box is this machine, found by dpkg: an x64 one refuses it the same way.
    if (process.arch === "x64")
      expect(install(["--root", root, "--offline", release.tarball]).stderr).toContain("this box is x64");
    expect(existsSync(join(root, "opt/klaxon"))).toBe(false);
  });

  it(
    "installed with install.sh --offline into a staged root, serves under emulation, journals a send across a restart and stops cleanly",
    {timeout: 2 * START_LIMIT_MS + 60_000},
    async () => {
      const root = scratchDir("klaxon-root-");
      const installed = install(["--root", root, "--arch", "arm64", "--offline", release.tarball]);
      expect({status: installed.status, stderr: installed.stderr}).toEqual({status: 0, stderr: ""});
      // The arm64 Node 24 and only arm64 native modules, where the unit runs them.
      const app = join(root, "opt/klaxon");
      expect(execStart(root)[0]).toBe(join(app, "runtime/bin/node"));
      expect(readFileSync(join(app, "RELEASE"), "utf8")).toMatch(
        /^version=.+\narch=arm64\nnode_version=v24\.\d+\.\d+\n/
      );
      expect(elfMachine(join(app, "runtime/bin/node"))).toBe(EM_AARCH64);
      expect(readdirSync(join(app, "node_modules/better-sqlite3/prebuilds"))).toEqual(["linux-arm64.node"]);
      expect(readdirSync(join(app, "node_modules/@serialport/bindings-cpp/prebuilds"))).toEqual(["linux-arm64"]);
      const serialport = join(app, "node_modules/@serialport/bindings-cpp/prebuilds/linux-arm64");
      expect(readdirSync(serialport)).toEqual(["@serialport+bindings-cpp.armv8.glibc.node"]);
      for (const binary of [
        join(app, "node_modules/better-sqlite3/prebuilds/linux-arm64.node"),
        join(serialport, "@serialport+bindings-cpp.armv8.glibc.node")
      ])
        expect(elfMachine(binary), binary).toBe(EM_AARCH64);
      const dataDir = scratchDir("klaxon-data-");

      const first = await startInstalled(root, dataDir);
      console.log(`the arm64 gateway started under emulation in ${(first.startupMs / 1000).toFixed(1)} s`);
      let notification: string;
      let exitCode: number | null;
      try {
        expect(await (await fetch(`${first.url}/healthz`)).json()).toEqual({status: "ok"});
        const headers = {
          "X-API-Key": readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim(),
          "Content-Type": "application/json"
        };
        const recipient = await fetch(`${first.url}/api/v1/recipients`, {
          method: "POST",
          headers,
          body: JSON.stringify({name: "Ops", email: "ops@factory.lan"})
        });
        expect(recipient.status).toBe(201);
        const sent = await fetch(`${first.url}/api/v1/notifications/send`, {
          method: "POST",
          headers,
          body: JSON.stringify({
            recipient_uuid: ((await recipient.json()) as {uuid: string}).uuid,
            message: "Press 7 hydraulic oil over 80 °C",
            priority: "high"
          })
        });
        expect(sent.status).toBe(202);
        notification = ((await sent.json()) as {notification_uuid: string}).notification_uuid;
      } finally {
        exitCode = await first.stop();
      }
      // SIGTERM: a clean shutdown, exit status 0.
      expect(exitCode).toBe(0);

      // The journal the emulated gateway wrote, read back by the next start.
      const second = await startInstalled(root, dataDir);
      console.log(`the arm64 gateway restarted under emulation in ${(second.startupMs / 1000).toFixed(1)} s`);
      try {
        const read = await fetch(`${second.url}/api/v1/notifications/${notification}`, {
          headers: {"X-API-Key": readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim()}
        });
        expect(read.status).toBe(200);
        expect(await read.json()).toMatchObject({
          id: notification,
          message: "Press 7 hydraulic oil over 80 °C",
          priority: "high"
        });
      } finally {
        exitCode = await second.stop();
      }
      expect(exitCode).toBe(0);
    }
  );
});
