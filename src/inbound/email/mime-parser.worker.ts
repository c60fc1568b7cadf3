import {serveSupervisedWork} from "../../lib/supervised-worker.js";
import {parseMime} from "./mail-reader.js";
import type {MimeAnswer, MimeWork} from "./mime-parser.js";

// The MIME parser's worker thread: mailparser reads each mail here, so a mail that makes it throw
// outside its promise, loop or eat memory ends this thread, never the gateway. A mail it merely
// cannot read is an answer, not a crash.
serveSupervisedWork<MimeWork, MimeAnswer>(async (work, emit) => {
  try {
    emit({id: work.id, mail: await parseMime(Buffer.from(work.raw))});
  } catch (error) {
    emit({id: work.id, error: error instanceof Error ? error.message : String(error)});
  }
});
