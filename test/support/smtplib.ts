import {spawn} from "node:child_process";
import {join} from "node:path";

/** One mail for Python's smtplib to send (test/support/smtplib-send.py says what each shape is). */
export interface PythonMail {
  shape: "plain" | "html" | "multipart" | "raw8bit" | "raw";
  from: string;
  to: string[];
  subject?: string;
  text?: string;
  html?: string;
  /** Attached as report.bin; the gateway must drop it. */
  attachment?: string;
  /** For "raw": the message's bytes, as latin-1 text. */
  raw?: string;
}

/** What smtplib was told for one mail. */
export type SendResult = {ok: true} | {ok: false; code: number; error: string};

export interface SmtplibRequest {
  port: number;
  mails: PythonMail[];
  starttls?: boolean;
  /** The CA file to trust for STARTTLS. */
  caFile?: string;
  login?: [string, string];
  /** The address to connect from (127.0.0.0/8 plays another host); the kernel's choice by default. */
  source?: string;
}

/**
 * Sends mails to 127.0.0.1 with Python's smtplib (python3, run as a child process), one
 * connection for all of them, and returns what the server answered for each.
 */
export function sendWithSmtplib(request: SmtplibRequest): Promise<SendResult[]> {
  const child = spawn("python3", [join(import.meta.dirname, "smtplib-send.py")], {stdio: ["pipe", "pipe", "pipe"]});
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  child.stdin.end(
    JSON.stringify({
      host: "127.0.0.1",
      port: request.port,
      mails: request.mails,
      starttls: request.starttls ?? false,
      ca_file: request.caFile ?? null,
      login: request.login ?? null,
      source: request.source ?? null
    })
  );
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`smtplib-send.py exited ${code}: ${err}`));
      else
        resolve(
          out
            .trim()
            .split("\n")
            .filter(Boolean)
            .map((line) => JSON.parse(line) as SendResult)
        );
    });
  });
}
