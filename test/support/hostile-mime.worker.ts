import {parseMime} from "../../src/inbound/email/mail-reader.js";
import type {MimeAnswer, MimeWork} from "../../src/inbound/email/mime-parser.js";
import {serveSupervisedWork} from "../../src/lib/supervised-worker.js";

const hoard: number[][] = [];

// The MIME parser's worker with faults planted behind words in the mail, standing in for a mail
// that finds a bug in mailparser: it throws outside any promise, loops for ever, eats memory, or
// answers in a shape the gateway must not trust. Any other mail is read by the real parser.
serveSupervisedWork<MimeWork, MimeAnswer>(async (work, emit) => {
  const raw = Buffer.from(work.raw);
  const text = raw.toString("latin1");
  if (text.includes("PARSER-THROWS"))
    setImmediate(() => {
      throw new TypeError("Cannot read properties of undefined (reading 'boundary')");
    });
  else if (text.includes("PARSER-HANGS")) for (;;);
  else if (text.includes("PARSER-EATS")) for (;;) hoard.push(new Array<number>(1_000_000).fill(1));
  else if (text.includes("PARSER-LIES"))
    emit({id: work.id, mail: {sender: 42, subject: ["x"]}} as unknown as MimeAnswer);
  else emit({id: work.id, mail: await parseMime(raw)});
});
