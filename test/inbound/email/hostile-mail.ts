import fc from "fast-check";

// Generators of hostile SMTP input for the intake's fuzz test: mails whose MIME is built to hurt a
// parser, and sessions that misuse the protocol. Sizes stay under the listener's max_bytes most of
// the time, so the parser (not the size check) meets them.

/** One mail body's bytes (latin-1 text) and what it tries. */
export interface HostileMail {
  kind: string;
  raw: string;
}

const headers = (subject: string, extra = "") =>
  `From: plc-7@plant.lan\r\nTo: fuzz\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\n${extra}`;

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1");

/** Multipart nested `depth` deep, each level with its own boundary; closed or not. */
const deepNesting = fc
  .record({depth: fc.integer({min: 50, max: 3000}), closed: fc.boolean()})
  .map(({depth, closed}) => {
    let body = "innermost\r\n";
    for (let level = depth; level > 0; level--) {
      const open = `Content-Type: multipart/mixed; boundary="b${level}"\r\n\r\n--b${level}\r\n`;
      body = open + body + (closed ? `\r\n--b${level}--\r\n` : "");
    }
    return {kind: `nesting ${depth}${closed ? "" : " unclosed"}`, raw: headers("deep") + body};
  });

/** Thousands of headers, or one header folded over hundreds of kilobytes. */
const hugeHeaders = fc.oneof(
  fc.integer({min: 1000, max: 20_000}).map((count) => ({
    kind: `${count} headers`,
    raw: headers("many headers") + Array.from({length: count}, (_, n) => `X-H${n}: v${n}\r\n`).join("") + "\r\nbody\r\n"
  })),
  fc.integer({min: 10_000, max: 400_000}).map((length) => ({
    kind: `one ${length}-byte folded subject`,
    raw: `Subject: ${"=?utf-8?B?w6k=?= ".repeat(length / 16)}\r\n\tfolded\r\n\r\nbody\r\n`
  }))
);

/** Encodings that lie: bad base64 and QP, unknown charsets, broken encoded words, 8-bit headers. */
const brokenEncodings = fc
  .record({
    charset: fc.constantFrom("no-such-charset", "utf-7", "iso-2022-jp", "utf-16", "x-\u00ff", ""),
    cte: fc.constantFrom("base64", "quoted-printable", "x-uuencode", "8bit", "binary", "bogus"),
    body: fc.uint8Array({minLength: 0, maxLength: 20_000}),
    words: fc.array(fc.constantFrom("=?utf-8?B?!!!?=", "=?x?Q?=ZZ?=", "=?utf-8?Q?", "=??=", "\u00e9\u00ff\u0000"), {
      maxLength: 50
    })
  })
  .map(({charset, cte, body, words}) => ({
    kind: `encoding ${cte}/${charset || "none"}`,
    raw:
      headers(
        words.join(" "),
        `Content-Type: text/plain; charset="${charset}"\r\nContent-Transfer-Encoding: ${cte}\r\n`
      ) + `\r\n${latin1(body)}\r\n=ZZ=\r\n`
  }));

/** A base64 attachment of random bytes, with random garbage in the base64 itself. */
const base64Garbage = fc
  .record({bytes: fc.uint8Array({minLength: 1, maxLength: 200_000}), junk: fc.string({maxLength: 200})})
  .map(({bytes, junk}) => ({
    kind: `base64 ${bytes.length} bytes`,
    raw:
      headers("attached", 'Content-Type: multipart/mixed; boundary="z"\r\n') +
      "\r\n--z\r\nContent-Type: text/plain\r\n\r\nsee attachment\r\n--z\r\n" +
      'Content-Type: application/octet-stream; name="x.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n' +
      (
        Buffer.from(bytes)
          .toString("base64")
          .match(/.{1,76}/g) ?? []
      ).join("\r\n") +
      junk +
      "\r\n--z--\r\n"
  }));

/** As many empty parts as fit: boundaries back to back, up to hundreds of thousands. */
const manyParts = fc.oneof(fc.integer({min: 2, max: 500}), fc.integer({min: 1000, max: 120_000})).map((parts) => ({
  kind: `${parts} parts`,
  raw:
    headers("parts", 'Content-Type: multipart/mixed; boundary="p"\r\n') +
    "\r\n" +
    "--p\r\n\r\n".repeat(parts) +
    "--p--\r\n"
}));

/** NUL bytes and other control bytes anywhere, headers included. */
const nulBytes = fc
  .array(fc.constantFrom("\u0000", "\u0001", "\u001b", "\u007f", "a", "\r", "\n"), {
    minLength: 1,
    maxLength: 5000
  })
  .map((bytes) => ({
    kind: "control bytes",
    raw: `Subj\u0000ect: nul\u0000${bytes.slice(0, 50).join("")}\r\nFrom: \u0000@\u0000\r\n\r\n${bytes.join("")}\r\n`
  }));

/** Body lines far beyond RFC 5322's 998 characters, with and without line ends. */
const overlongLines = fc.integer({min: 2000, max: 600_000}).map((length) => ({
  kind: `${length}-char line`,
  raw: headers("long line") + "\r\n" + "x".repeat(length) + "\r\n"
}));

/** Bytes with no structure at all. */
const randomBytes = fc.uint8Array({minLength: 0, maxLength: 50_000}).map((bytes) => ({
  kind: "random bytes",
  raw: latin1(bytes)
}));

export const hostileMail: fc.Arbitrary<HostileMail> = fc.oneof(
  deepNesting,
  hugeHeaders,
  brokenEncodings,
  base64Garbage,
  manyParts,
  nulBytes,
  overlongLines,
  randomBytes
);

/** Protocol misuse: what is written in one go (CRLF or bare LF line ends), and what it tries. */
export interface AbusiveSession {
  kind: string;
  bytes: string;
}

const line = (text: string, bareLf: boolean) => text + (bareLf ? "\n" : "\r\n");

export const abusiveSession = (address: string): fc.Arbitrary<AbusiveSession> =>
  fc.oneof(
    fc.integer({min: 100, max: 5000}).map((count) => ({
      kind: `${count} pipelined NOOPs`,
      bytes: "EHLO flood\r\n" + "NOOP\r\n".repeat(count) + "QUIT\r\n"
    })),
    fc
      .constantFrom("MAIL FROM:<a@plant.lan>", "RCPT TO:<" + address + ">", "DATA", "BDAT 10 LAST", "AUTH PLAIN AA==")
      .map((command) => ({
        kind: `${command.split(" ")[0]} before EHLO`,
        bytes: `${command}\r\n0123456789\r\nQUIT\r\n`
      })),
    fc.integer({min: 100, max: 2000}).map((count) => ({
      kind: `${count} RCPTs`,
      bytes:
        "EHLO rcpt\r\nMAIL FROM:<a@plant.lan>\r\n" +
        Array.from({length: count}, (_, n) => `RCPT TO:<u${n}@example.com>\r\n`).join("") +
        `RCPT TO:<${address}>\r\nRSET\r\nQUIT\r\n`
    })),
    fc.record({size: fc.integer({min: 0, max: 100_000}), last: fc.boolean()}).map(({size, last}) => ({
      kind: "BDAT chunks",
      bytes: `EHLO bdat\r\nMAIL FROM:<a@plant.lan>\r\nRCPT TO:<${address}>\r\nBDAT ${size}${last ? " LAST" : ""}\r\n${"b".repeat(Math.min(size, 1000))}\r\nQUIT\r\n`
    })),
    fc.constantFrom(
      {
        kind: "DATA twice",
        bytes: `EHLO d\r\nMAIL FROM:<a@plant.lan>\r\nRCPT TO:<${address}>\r\nDATA\r\nDATA\r\n.\r\nDATA\r\nQUIT\r\n`
      },
      {kind: "DATA without RCPT", bytes: "EHLO d\r\nMAIL FROM:<a@plant.lan>\r\nDATA\r\nhello\r\n.\r\nQUIT\r\n"},
      {kind: "MAIL twice", bytes: "EHLO d\r\nMAIL FROM:<a@plant.lan>\r\nMAIL FROM:<b@plant.lan>\r\nQUIT\r\n"},
      {kind: "HTTP on SMTP", bytes: "GET / HTTP/1.1\r\nHost: x\r\n\r\n"}
    ),
    fc.record({bareLf: fc.boolean(), junk: fc.string({maxLength: 300})}).map(({bareLf, junk}) => ({
      kind: bareLf ? "bare LF" : "junk commands",
      bytes: [
        line("EHLO lf", bareLf),
        line("MAIL FROM:<a@plant.lan>", bareLf),
        line(`RCPT TO:<${address}>`, bareLf),
        line("DATA", bareLf),
        line(`Subject: lf ${junk}`, bareLf),
        line("", bareLf),
        line("body", bareLf),
        line(".", bareLf),
        line("QUIT", bareLf)
      ].join("")
    })),
    fc.integer({min: 20_000, max: 300_000}).map((length) => ({
      kind: `${length}-byte command line`,
      bytes: `EHLO ${"h".repeat(length)}\r\nNOOP\r\n`
    })),
    fc.uint8Array({minLength: 1, maxLength: 20_000}).map((bytes) => ({kind: "random bytes", bytes: latin1(bytes)}))
  );
