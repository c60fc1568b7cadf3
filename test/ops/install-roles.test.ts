import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {spawnSync} from "node:child_process";
import {createHash} from "node:crypto";
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join, relative} from "node:path";
import {install, INSTALL, installPlan as plan, ROOT, useRelease} from "../support/install-rig.js";
import {loadSettings} from "../../src/settings/load-settings.js";

const SAMPLE = readFileSync(join(ROOT, "config/klaxon.yaml"), "utf8");
const SSHD = "/usr/sbin/sshd";
const PEER_HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOa7e2pFjRz0yMTq0p8C0f7l0yJv2Zq0Zs1yq3m2x8Qf root@klaxon-b";
const PEER_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFq7wV2sQ3m1bX0y9kTqk2Yb1c4gq5n3e8Zl9oR7hJtD klaxon@klaxon-b";

const {release, tempDir, stage} = useRelease();
// install.sh only copies the binary: a stand-in is enough, and its bytes show it was copied.
const standIn = mkdtempSync(join(tmpdir(), "klaxon-litestream-"));
const litestream = join(standIn, "litestream");
beforeAll(() => writeFileSync(litestream, "#!/bin/sh\necho v0.5.18\n", {mode: 0o755}));
afterAll(() => rmSync(standIn, {recursive: true, force: true}));

const roleArgs = (role: string) => [
  "--role",
  role,
  "--peer",
  "http://10.0.0.12:8080",
  "--peer-host-key",
  PEER_HOST_KEY,
  "--litestream",
  litestream,
  "--box-name",
  `klaxon-${role}`
];

const mode = (path: string) => (statSync(path).mode & 0o7777).toString(8);

/** Every file outside the app with its mode and content hash: what a second run must reproduce. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, {withFileTypes: true})) {
      const path = join(dir, entry.name);
      if (path === join(root, "opt")) continue;
      if (entry.isDirectory()) {
        out[`${relative(root, path)}/`] = mode(path);
        walk(path);
      } else if (entry.isFile())
        out[relative(root, path)] = `${mode(path)} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`;
    }
  };
  walk(root);
  return out;
}

/** The staged config read by the gateway's own loader, as the unit runs it (KLAXON_CONFIG). */
const replicationSettings = (root: string) =>
  loadSettings({KLAXON_CONFIG: join(root, "etc/klaxon/klaxon.yaml")}).settings.replication;

describe("install.sh --role", {timeout: 300_000}, () => {
  it.each(["active", "standby"])(
    "sets up the %s role: settings the gateway loads, Litestream, the SFTP key, the peer's incoming folder and sshd",
    (role) => {
      const root = tempDir("klaxon-root-");
      const result = stage(root, ...roleArgs(role));

      expect(replicationSettings(root)).toEqual({
        role,
        box_name: `klaxon-${role}`,
        peer: "http://10.0.0.12:8080",
        takeover_after_seconds: 30,
        lag_alarm_seconds: 60,
        litestream: "/usr/local/bin/litestream",
        replica: "sftp://klaxon-replica@10.0.0.12:22/var/lib/klaxon-replica/incoming",
        sftp_key_file: "/etc/klaxon/replication_ed25519",
        sftp_host_key: PEER_HOST_KEY,
        incoming: "/var/lib/klaxon-replica/incoming"
      });
      // Only the replication section changed: every comment and other setting is the sample's.
      const config = readFileSync(join(root, "etc/klaxon/klaxon.yaml"), "utf8");
      expect(config.split("\n").filter((line) => !SAMPLE.split("\n").includes(line))).toHaveLength(8);
      expect(existsSync(join(root, "etc/klaxon/klaxon.yaml.dist"))).toBe(false);

      const bin = join(root, "usr/local/bin/litestream");
      expect(readFileSync(bin)).toEqual(readFileSync(litestream));
      expect(mode(bin)).toBe("755");

      // The key pair: the private half for the klaxon user alone, the public half it derives.
      const key = join(root, "etc/klaxon/replication_ed25519");
      expect(mode(key)).toBe("600");
      expect(mode(`${key}.pub`)).toBe("644");
      const derived = spawnSync("ssh-keygen", ["-y", "-f", key], {encoding: "utf8"});
      const publicKey = readFileSync(`${key}.pub`, "utf8").trim();
      expect(publicKey.startsWith(derived.stdout.trim())).toBe(true);
      expect(publicKey).toMatch(new RegExp(` klaxon@klaxon-${role}$`));
      expect(result.stdout).toContain(
        `  echo 'restrict ${publicKey}' | sudo tee -a /var/lib/klaxon-replica/.ssh/authorized_keys\n`
      );

      // The peer's incoming folder: setgid, so what the peer ships is the klaxon group's to read.
      const home = join(root, "var/lib/klaxon-replica");
      expect(mode(home)).toBe("755");
      expect(mode(join(home, "incoming"))).toBe("2750");
      expect(mode(join(home, ".ssh"))).toBe("755");
      expect(mode(join(home, ".ssh/authorized_keys"))).toBe("644");
      expect(readFileSync(join(home, ".ssh/authorized_keys"), "utf8")).toBe("");

      expect(plan(root)).toEqual(
        expect.arrayContaining([
          "chown klaxon:klaxon /etc/klaxon/replication_ed25519 /etc/klaxon/replication_ed25519.pub",
          "useradd --system --user-group --home-dir /var/lib/klaxon-replica --no-create-home --shell /usr/sbin/nologin --password * klaxon-replica",
          "chown root:root /var/lib/klaxon-replica /var/lib/klaxon-replica/.ssh",
          "chown klaxon-replica:klaxon /var/lib/klaxon-replica/incoming",
          "chown root:root /var/lib/klaxon-replica/.ssh/authorized_keys",
          "sshd -t",
          "systemctl reload ssh.service"
        ])
      );
      // The sshd reload comes before the gateway restarts and starts shipping.
      expect(plan(root).indexOf("systemctl reload ssh.service")).toBeLessThan(
        plan(root).indexOf("systemctl restart klaxon.service")
      );
    }
  );

  it.skipIf(!existsSync(SSHD))(
    "gives the replica user SFTP and nothing else, in sshd's own reading of the snippet (skipped only without openssh-server)",
    () => {
      const root = tempDir("klaxon-root-");
      stage(root, ...roleArgs("standby"));
      const hostKey = join(root, "host_ed25519");
      expect(spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey]).status).toBe(0);
      // As Debian's sshd_config reads sshd_config.d: included first, before the main settings.
      const config = join(root, "sshd_config");
      writeFileSync(
        config,
        `Include ${root}/etc/ssh/sshd_config.d/*.conf\nHostKey ${hostKey}\nUsePAM no\nX11Forwarding yes\n`
      );
      const effective = (user: string) => {
        const shown = spawnSync(SSHD, ["-T", "-f", config, "-C", `user=${user},host=peer,addr=10.0.0.12`], {
          encoding: "utf8"
        });
        expect(shown.stderr).toBe("");
        return shown.stdout;
      };
      const replica = effective("klaxon-replica");
      expect(replica).toContain("forcecommand internal-sftp -u 0027\n");
      expect(replica).toContain("authenticationmethods publickey\n");
      for (const off of ["allowtcpforwarding", "permittty", "x11forwarding", "permittunnel"])
        expect(replica).toContain(`${off} no\n`);
      // The Match block ends with its file: everyone else keeps the main config's settings.
      expect(effective("admin")).toContain("forcecommand none\n");
      expect(effective("admin")).toContain("x11forwarding yes\n");
    }
  );

  it("changes nothing when run again, keeps the peer's host key without --peer-host-key, and adds --peer-key once", () => {
    const root = tempDir("klaxon-root-");
    stage(root, ...roleArgs("active"));
    const first = snapshot(root);
    const firstPlan = plan(root);
    stage(root, ...roleArgs("active"));
    expect(snapshot(root)).toEqual(first);
    expect(plan(root)).toEqual(firstPlan);

    const withoutHostKey = roleArgs("active").filter((arg) => arg !== "--peer-host-key" && arg !== PEER_HOST_KEY);
    stage(root, ...withoutHostKey, "--peer-key", PEER_KEY);
    stage(root, ...withoutHostKey, "--peer-key", PEER_KEY);
    expect(replicationSettings(root).sftp_host_key).toBe(PEER_HOST_KEY);
    expect(readFileSync(join(root, "var/lib/klaxon-replica/.ssh/authorized_keys"), "utf8")).toBe(
      `restrict ${PEER_KEY}\n`
    );
    expect(existsSync(join(root, "etc/klaxon/klaxon.yaml.dist"))).toBe(false);
  });

  it("sets the role in an edited config and keeps the edits; a plain upgrade keeps the role", () => {
    const root = tempDir("klaxon-root-");
    stage(root);
    const config = join(root, "etc/klaxon/klaxon.yaml");
    writeFileSync(config, SAMPLE.replace("port: 8080", "port: 9090"));
    const result = stage(root, ...roleArgs("standby"), "--replica", "sftp://shipper@10.0.0.12:2222/srv/klaxon");
    expect(result.stdout).toContain("kept your edited /etc/klaxon/klaxon.yaml");
    expect(mode(config)).toBe("640");
    const loaded = loadSettings({KLAXON_CONFIG: config}).settings;
    expect(loaded.port).toBe(9090);
    expect(loaded.replication.replica).toBe("sftp://shipper@10.0.0.12:2222/srv/klaxon");
    expect(loaded.replication.role).toBe("standby");

    stage(root);
    expect(replicationSettings(root).role).toBe("standby");
    expect(loadSettings({KLAXON_CONFIG: config}).settings.port).toBe(9090);
  });

  it("takes the sshd snippet away on --uninstall, and the replica user and what the peer shipped with --purge", () => {
    const root = tempDir("klaxon-root-");
    stage(root, ...roleArgs("standby"));
    writeFileSync(join(root, "var/lib/klaxon-replica/incoming/generation"), "shipped");
    expect(install(["--root", root, "--uninstall"]).status).toBe(0);
    expect(existsSync(join(root, "etc/ssh/sshd_config.d/klaxon-replica.conf"))).toBe(false);
    expect(plan(root)).toContain("systemctl reload ssh.service");
    expect(readFileSync(join(root, "var/lib/klaxon-replica/incoming/generation"), "utf8")).toBe("shipped");
    expect(existsSync(join(root, "usr/local/bin/litestream"))).toBe(true);

    expect(install(["--root", root, "--uninstall", "--purge"]).status).toBe(0);
    expect(existsSync(join(root, "var/lib/klaxon-replica"))).toBe(false);
    expect(existsSync(join(root, "etc/klaxon/replication_ed25519"))).toBe(false);
    expect(plan(root)).toContain("userdel klaxon-replica");
  });

  it.each([
    [["--role", "primary"], 'install.sh: --role takes active or standby, not "primary"'],
    [["--role", "active"], "install.sh: --role active needs --peer, the other box's base URL"],
    [["--role", "standby", "--peer", "10.0.0.12:8080"], "install.sh: --peer takes the other box's base URL"],
    [["--role", "standby", "--peer", "http://10.0.0.12:8080/api"], "install.sh: --peer takes the other box's base URL"],
    [["--role", "active", "--peer", "http://b:8080"], "install.sh: --role active needs --peer-host-key"],
    [["--role", "active", "--peer", "http://b:8080", "--peer-host-key", "AAAA"], "install.sh: --peer-host-key takes"],
    [["--peer", "http://b:8080"], "install.sh: --peer, --box-name, --replica, --litestream, --peer-host-key and"],
    [["--role", "active", "--peer", "http://b:8080", "--replica", "/mnt/nas"], "install.sh: --replica takes sftp://"],
    [["--role"], "install.sh: --role needs a value"]
  ])("refuses %j before installing anything", (args, message) => {
    const root = tempDir("klaxon-root-");
    const result = install(["--root", root, "--offline", release.tarball, ...args]);
    expect(result.stderr).toContain(message);
    expect(result.status).toBe(1);
    expect(existsSync(join(root, "opt/klaxon"))).toBe(false);
  });

  it("refuses a role without Litestream, which it never downloads", () => {
    const root = tempDir("klaxon-root-");
    const args = roleArgs("active").slice(0, 6);
    const missing = spawnSync("bash", [INSTALL, "--root", root, "--offline", release.tarball, ...args], {
      encoding: "utf8",
      env: {PATH: "/usr/bin:/bin"}
    });
    expect(missing.stderr).toBe(
      "install.sh: --role active needs Litestream v0.5 and it is not on this box: give --litestream PATH to its binary (install.sh downloads nothing)\n"
    );
    expect(missing.status).toBe(1);
    const notExecutable = install([
      "--root",
      root,
      "--offline",
      release.tarball,
      ...args,
      "--litestream",
      INSTALL + ".md"
    ]);
    expect(notExecutable.stderr).toBe(`install.sh: --litestream ${INSTALL}.md is not an executable file\n`);
  });
});
