import {describe, expect, it} from "vitest";
import {spawn, spawnSync} from "node:child_process";
import {createHash} from "node:crypto";
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync
} from "node:fs";
import {join, relative} from "node:path";
import {install, installPlan as plan, ROOT, useRelease} from "../support/install-rig.js";

const SAMPLE = readFileSync(join(ROOT, "config/klaxon.yaml"), "utf8");
const HAS_SYSTEMD_ANALYZE = spawnSync("systemd-analyze", ["--version"]).status === 0;
const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;

const {release, tempDir, stage} = useRelease();

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Every file outside node_modules with its mode and content hash (a link: its target): what a second run must reproduce. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, {withFileTypes: true})) {
      const path = join(dir, entry.name);
      if (entry.name === "node_modules") continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isSymbolicLink()) out[relative(root, path)] = `-> ${readlinkSync(path)}`;
      else out[relative(root, path)] = `${mode(path)} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`;
    }
  };
  walk(root);
  return out;
}

// Each staged install unpacks the release with its node_modules and its Node (about 190 MB): seconds
// each, a minute on a loaded box, and a test stages up to three.
describe("install.sh --root", {timeout: 300_000}, () => {
  it("stages the app, config, data dir, udev rule and unit with their modes, and plans users and services", () => {
    const root = tempDir("klaxon-root-");
    const result = stage(root);
    expect(result.stdout).toContain("dashboard: http://");
    expect(result.stdout).toContain("sudo cat /var/lib/klaxon/initial-admin-key");

    const app = join(root, "opt/klaxon");
    expect(existsSync(join(app, "dist/main.js"))).toBe(true);
    expect(existsSync(join(app, "dist/dashboard/public/index.html"))).toBe(true);
    expect(existsSync(join(app, `node_modules/better-sqlite3/prebuilds/linux-${process.arch}.node`))).toBe(true);
    for (const devOnly of ["vitest", "@swc", "typescript", "esbuild", "src"])
      expect(existsSync(join(app, "node_modules", devOnly)), devOnly).toBe(false);
    expect(existsSync(join(app, "src"))).toBe(false);
    expect(readFileSync(join(app, "RELEASE"), "utf8")).toContain(`arch=${process.arch}`);
    // klaxon_build_info's commit label comes from here (the release is packaged from this checkout).
    expect(readFileSync(join(app, "RELEASE"), "utf8")).toMatch(/^commit=[0-9a-f]{40}$/m);

    expect(readFileSync(join(root, "etc/klaxon/klaxon.yaml"), "utf8")).toBe(SAMPLE);
    expect(mode(join(root, "etc/klaxon"))).toBe("750");
    expect(mode(join(root, "etc/klaxon/klaxon.yaml"))).toBe("640");
    expect(mode(join(root, "etc/klaxon/klaxon.env"))).toBe("600");
    expect(mode(join(root, "var/lib/klaxon"))).toBe("700");
    expect(mode(join(app, "dist/main.js"))).toBe("644");

    // klaxon-admin: the bundled CLI run by a script with the release's own Node, linked onto the PATH.
    expect(mode(join(app, "bin/klaxon-admin"))).toBe("755");
    expect(readFileSync(join(app, "bin/klaxon-admin"), "utf8")).toContain('exec "$app/runtime/bin/node" ');
    expect(existsSync(join(app, "dist/klaxon-admin.cjs"))).toBe(true);
    expect(readlinkSync(join(root, "usr/local/bin/klaxon-admin"))).toBe("/opt/klaxon/bin/klaxon-admin");
    // No Node single-executable CLI any more, nor the CLI's tsc output beside its bundle; outside
    // node_modules the only executable of a machine is the release's Node (with its licence).
    expect(existsSync(join(app, "dist/klaxon"))).toBe(false);
    expect(existsSync(join(app, "dist/cli"))).toBe(false);
    const elf = Object.keys(snapshot(app)).filter((file) => {
      const path = join(app, file);
      return !lstatSync(path).isSymbolicLink() && readFileSync(path).subarray(0, 4).toString("latin1") === "\x7fELF";
    });
    expect(elf).toEqual(["runtime/bin/node"]);
    expect(mode(join(app, "runtime/bin/node"))).toBe("755");
    expect(readFileSync(join(app, "runtime/LICENSE"), "utf8")).toContain("Node.js");
    expect(readFileSync(join(app, "RELEASE"), "utf8")).toMatch(/^node_version=v24\.\d+\.\d+$/m);

    const rule = readFileSync(join(root, "etc/udev/rules.d/77-klaxon-modem.rules"), "utf8");
    expect(rule).toContain('SYMLINK+="klaxon-modem"');
    expect(rule).toContain('ENV{ID_MM_DEVICE_IGNORE}="1"');
    // The whole SIMCom or Quectel modem, not only its AT port: ModemManager would still drive its QMI port.
    for (const vendor of ["1e0e", "2c7c"])
      expect(rule).toContain(
        `SUBSYSTEM=="usb", ENV{DEVTYPE}=="usb_device", ATTR{idVendor}=="${vendor}", ENV{ID_MM_DEVICE_IGNORE}="1"`
      );
    const unit = readFileSync(join(root, "etc/systemd/system/klaxon.service"), "utf8");
    expect(unit).toContain(
      "ExecStart=/opt/klaxon/runtime/bin/node --max-semi-space-size=4 --initial-old-space-size=24 --v8-pool-size=2 --expose-gc /opt/klaxon/dist/main.js\n"
    );

    expect(plan(root)).toEqual([
      "useradd --system --user-group --home-dir /var/lib/klaxon --no-create-home --shell /usr/sbin/nologin klaxon",
      "usermod --append --groups dialout klaxon",
      "chown -R root:root /opt/klaxon",
      "chown root:klaxon /etc/klaxon",
      "chown root:klaxon /etc/klaxon/klaxon.yaml",
      "chown klaxon:klaxon /var/lib/klaxon",
      "udevadm control --reload-rules",
      "udevadm trigger --subsystem-match=tty --action=change",
      "systemctl daemon-reload",
      "systemctl enable klaxon.service",
      "systemctl restart klaxon.service"
    ]);
  });

  it.skipIf(!HAS_SYSTEMD_ANALYZE)(
    "writes a unit that systemd-analyze verify accepts as installed (skipped only where systemd-analyze is not installed)",
    () => {
      const root = tempDir("klaxon-root-");
      stage(root);
      // verify wants ExecStart's program to exist: the staged root's copy of the release's Node.
      const unit = join(root, "etc/systemd/system/klaxon.service");
      writeFileSync(unit, readFileSync(unit, "utf8").replace("=/opt/klaxon/", `=${root}/opt/klaxon/`));
      const verified = spawnSync("systemd-analyze", ["verify", unit], {encoding: "utf8"});
      expect({status: verified.status, output: (verified.stdout + verified.stderr).trim()}).toEqual({
        status: 0,
        output: ""
      });
    }
  );

  it("plans the Debian packages when online, and none from an offline tarball", () => {
    const root = tempDir("klaxon-root-");
    stage(root);
    expect(plan(root).some((line) => line.includes("apt-get"))).toBe(false);
    // Online from a release folder: the unpacked tarball's own install.sh.
    const unpacked = tempDir("klaxon-unpacked-");
    expect(spawnSync("tar", ["-xzf", release.tarball, "-C", unpacked]).status).toBe(0);
    const releaseFolder = join(unpacked, readdirSync(unpacked)[0]);
    const online = tempDir("klaxon-root-");
    const result = install(["--root", online], join(releaseFolder, "install.sh"));
    expect(result.status).toBe(0);
    expect(plan(online)[0]).toBe(
      "env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends espeak-ng opus-tools"
    );
    expect(existsSync(join(online, "opt/klaxon/dist/main.js"))).toBe(true);
  });

  it("is idempotent: a second run leaves the same files and plans the same commands", () => {
    const root = tempDir("klaxon-root-");
    stage(root);
    const first = snapshot(root);
    const firstPlan = plan(root);
    stage(root);
    expect(snapshot(root)).toEqual(first);
    expect(plan(root)).toEqual(firstPlan);
    expect(existsSync(join(root, "opt/klaxon.old"))).toBe(false);
    expect(existsSync(join(root, "etc/klaxon/klaxon.yaml.dist"))).toBe(false);
  });

  it("keeps an edited config on upgrade, with the new sample beside it, and replaces an unedited one", () => {
    const root = tempDir("klaxon-root-");
    stage(root);
    const config = join(root, "etc/klaxon/klaxon.yaml");
    const edited = SAMPLE.replace("port: 8080", "port: 9090");
    writeFileSync(config, edited);
    writeFileSync(join(root, "etc/klaxon/klaxon.env"), "KLAXON_SMTP_PASSWORD=kept\n");
    const upgrade = stage(root);
    expect(upgrade.stdout).toContain("kept your edited /etc/klaxon/klaxon.yaml");
    expect(upgrade.stdout).toContain("dashboard: http://");
    expect(upgrade.stdout).toContain(":9090/dashboard");
    expect(readFileSync(config, "utf8")).toBe(edited);
    expect(readFileSync(`${config}.dist`, "utf8")).toBe(SAMPLE);
    expect(readFileSync(join(root, "etc/klaxon/klaxon.env"), "utf8")).toBe("KLAXON_SMTP_PASSWORD=kept\n");

    // An older release's sample left unedited is replaced by this release's sample.
    const older = "# the sample of an older release\nport: 8080\n";
    writeFileSync(config, older);
    writeFileSync(join(root, "opt/klaxon/config/klaxon.yaml"), older);
    stage(root);
    expect(readFileSync(config, "utf8")).toBe(SAMPLE);
    expect(existsSync(`${config}.dist`)).toBe(false);
  });

  it("raises net.core.somaxconn where the kernel's is below what a storm needs, and leaves it alone otherwise", () => {
    const low = tempDir("klaxon-root-");
    mkdirSync(join(low, "proc/sys/net/core"), {recursive: true});
    writeFileSync(join(low, "proc/sys/net/core/somaxconn"), "128\n");
    stage(low);
    expect(readFileSync(join(low, "etc/sysctl.d/90-klaxon.conf"), "utf8")).toContain("net.core.somaxconn = 4096");
    expect(plan(low)).toContain("sysctl --load /etc/sysctl.d/90-klaxon.conf");
    expect(install(["--root", low, "--uninstall"]).status).toBe(0);
    expect(existsSync(join(low, "etc/sysctl.d/90-klaxon.conf"))).toBe(false);

    const enough = tempDir("klaxon-root-");
    mkdirSync(join(enough, "proc/sys/net/core"), {recursive: true});
    writeFileSync(join(enough, "proc/sys/net/core/somaxconn"), "4096\n");
    stage(enough);
    expect(existsSync(join(enough, "etc/sysctl.d/90-klaxon.conf"))).toBe(false);
    expect(plan(enough).some((line) => line.startsWith("sysctl"))).toBe(false);
  });

  it("keeps settings and data on --uninstall, and removes them with --purge", () => {
    const root = tempDir("klaxon-root-");
    stage(root);
    writeFileSync(join(root, "var/lib/klaxon/journal.sqlite"), "data");
    const kept = install(["--root", root, "--uninstall"]);
    expect(kept.status).toBe(0);
    expect(existsSync(join(root, "opt/klaxon"))).toBe(false);
    expect(existsSync(join(root, "etc/systemd/system/klaxon.service"))).toBe(false);
    expect(existsSync(join(root, "etc/udev/rules.d/77-klaxon-modem.rules"))).toBe(false);
    expect(readdirSync(join(root, "usr/local/bin"))).toEqual([]);
    expect(readFileSync(join(root, "var/lib/klaxon/journal.sqlite"), "utf8")).toBe("data");
    expect(existsSync(join(root, "etc/klaxon/klaxon.yaml"))).toBe(true);
    expect(plan(root)).toEqual([
      "systemctl disable --now klaxon.service",
      "systemctl daemon-reload",
      "udevadm control --reload-rules"
    ]);

    expect(install(["--root", root, "--uninstall", "--purge"]).status).toBe(0);
    expect(existsSync(join(root, "var/lib/klaxon"))).toBe(false);
    expect(existsSync(join(root, "etc/klaxon"))).toBe(false);
    expect(plan(root)).toContain("userdel klaxon");
  });

  it("refuses a release for another CPU, and one whose journal binding does not load here, before installing anything", () => {
    // This machine staging an image for a box of the other architecture (--arch) is refused this
    // release; test/ops/release-arm64.test.ts checks the arm64 release the other way round.
    const otherArch = process.arch === "arm64" ? "x64" : "arm64";
    const root = tempDir("klaxon-root-");
    const foreign = install(["--root", root, "--arch", otherArch, "--offline", release.tarball]);
    expect(foreign.stderr).toBe(
      `install.sh: this release is for linux-${process.arch}, but this box is ${otherArch}; install klaxon-${VERSION}-linux-${otherArch}.tar.gz (npm run package -- --arch ${otherArch})\n`
    );
    expect(foreign.status).toBe(1);
    expect(existsSync(join(root, "opt/klaxon"))).toBe(false);

    // The release's Node loads the journal's SQLite before anything is installed: here, with the
    // binding of the other CPU in its place (on a box whose glibc is too old it fails the same way).
    const unpacked = tempDir("klaxon-unpacked-");
    expect(spawnSync("tar", ["-xzf", release.tarball, "-C", unpacked]).status).toBe(0);
    const releaseFolder = join(unpacked, readdirSync(unpacked)[0]);
    copyFileSync(
      join(ROOT, `node_modules/better-sqlite3/prebuilds/linux-${otherArch}.node`),
      join(releaseFolder, `node_modules/better-sqlite3/prebuilds/linux-${process.arch}.node`)
    );
    const broken = install(["--root", root], join(releaseFolder, "install.sh"));
    expect(broken.stderr).toContain(
      "install.sh: the release's Node cannot open the journal's SQLite on this system; Klaxon needs glibc 2.34 or newer"
    );
    expect(broken.status).toBe(1);
    expect(existsSync(join(root, "opt/klaxon"))).toBe(false);
  });

  it("installs an app that runs from the built dist with production dependencies only, and a klaxon-admin that checks it", async () => {
    const root = tempDir("klaxon-root-");
    stage(root);
    const dataDir = tempDir();
    mkdirSync(dataDir, {recursive: true});
    // With the release's own Node, as the unit runs it.
    const child = spawn(join(root, "opt/klaxon/runtime/bin/node"), [join(root, "opt/klaxon/dist/main.js")], {
      cwd: join(root, "opt/klaxon"),
      env: {
        PATH: process.env.PATH ?? "",
        NODE_ENV: "production",
        KLAXON_CONFIG: join(root, "etc/klaxon/klaxon.yaml"),
        KLAXON_DATA_DIR: dataDir,
        KLAXON_HOST: "127.0.0.1",
        KLAXON_PORT: "0"
      },
      stdio: ["ignore", "pipe", "inherit"]
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          for (const line of chunk.toString().split("\n"))
            if (line.includes('"gateway serving"')) resolve(JSON.parse(line).url);
        });
        child.on("exit", (code) => reject(new Error(`the installed gateway exited with ${code}`)));
      });
      const key = readFileSync(join(dataDir, "initial-admin-key"), "utf8").trim();
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      // Validation needs the decorator metadata tsc emitted: an invalid body is refused.
      const invalid = await fetch(`${url}/api/v1/notifications/send`, {
        method: "POST",
        headers: {"X-API-Key": key, "Content-Type": "application/json"},
        body: JSON.stringify({message: "x"})
      });
      expect(invalid.status).toBe(400);
      expect((await fetch(`${url}/dashboard/`)).status).toBe(200);
      expect((await fetch(`${url}/metrics`)).status).toBe(200);

      // The installed klaxon-admin, run through its PATH link's target with nothing else on PATH:
      // the release's version, and doctor's checks of the installed config and the gateway serving.
      const admin = (...args: string[]) =>
        spawnSync(join(root, "opt/klaxon/bin/klaxon-admin"), args, {
          encoding: "utf8",
          env: {PATH: "/usr/bin:/bin", KLAXON_CONFIG: join(root, "etc/klaxon/klaxon.yaml"), KLAXON_DATA_DIR: dataDir}
        });
      const version = admin("--version");
      expect({status: version.status, stderr: version.stderr}).toEqual({status: 0, stderr: ""});
      expect(version.stdout.trim()).toBe(VERSION);
      const doctor = admin("doctor", "--url", url);
      expect(doctor.stdout).toMatch(/^ok\s+config\s+\S+\/etc\/klaxon\/klaxon\.yaml is valid$/m);
      expect(doctor.stdout).toContain(`ok    gateway                 ${url} is serving and ready\n`);
      expect({status: doctor.status, stderr: doctor.stderr}).toEqual({status: 0, stderr: ""});
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});
