import {execFileSync, spawn} from "node:child_process";
import {mkdirSync, readFileSync, writeFileSync} from "node:fs";
import {createServer} from "node:net";
import {join} from "node:path";
import {tempDir} from "./gateway.js";

/** Debian's OpenSSH server on a loopback address, serving SFTP to one key: a box's replica target. */
export interface Sshd {
  host: string;
  port: number;
  /** Its host key as known_hosts writes it ("ssh-ed25519 AAAA..."), for replication.sftp_host_key. */
  hostKey: string;
  /** The private key it lets in, for replication.sftp_key_file. */
  clientKeyFile: string;
  stop(): Promise<void>;
}

const SSHD = "/usr/sbin/sshd";

async function freePort(host: string): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const {port} = server.address() as {port: number};
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function keyPair(path: string): string {
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path]);
  return readFileSync(`${path}.pub`, "utf8").trim();
}

export async function startSshd(host: string): Promise<Sshd> {
  const dir = tempDir("klaxon-sshd-");
  // sshd refuses to start without its privilege-separation directory.
  mkdirSync("/run/sshd", {recursive: true, mode: 0o755});
  const hostKey = keyPair(join(dir, "host_ed25519")).split(" ").slice(0, 2).join(" ");
  writeFileSync(join(dir, "authorized_keys"), keyPair(join(dir, "client_ed25519")) + "\n", {mode: 0o600});
  const port = await freePort(host);
  const config = join(dir, "sshd_config");
  writeFileSync(
    config,
    [
      `Port ${port}`,
      `ListenAddress ${host}`,
      `HostKey ${join(dir, "host_ed25519")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "StrictModes no",
      `PidFile ${join(dir, "sshd.pid")}`,
      "Subsystem sftp internal-sftp"
    ].join("\n") + "\n"
  );
  // -D: in the foreground, so this process is sshd itself and stopping it stops the server.
  const child = spawn(SSHD, ["-D", "-e", "-f", config], {stdio: ["ignore", "ignore", "pipe"]});
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const poll = () => {
      if (output.includes("Server listening")) return resolve();
      if (child.exitCode !== null || Date.now() > deadline) return reject(new Error(`sshd did not start:\n${output}`));
      setTimeout(poll, 50);
    };
    poll();
  });
  return {
    host,
    port,
    hostKey,
    clientKeyFile: join(dir, "client_ed25519"),
    async stop() {
      child.kill("SIGTERM");
      await exited;
    }
  };
}
