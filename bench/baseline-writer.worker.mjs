// The baseline server's writer thread (BASELINE_WRITER=worker): owns its own connection to the
// journal, commits each batch the main thread hands it in one transaction as it arrives, and
// answers once the WAL flush (fsync on this thread's pool, overlapping the next commits) covers it.
// Answers go back in the order the batches came.

import {parentPort, workerData} from "node:worker_threads";
import {openJournal, walFlusher} from "./baseline-journal.mjs";

const {commitBatch} = openJournal(workerData.dbPath);
const afterCommit = walFlusher(workerData.dbPath);

parentPort.on("message", ({inputs, nowMs}) => {
  let results;
  try {
    results = commitBatch(inputs, nowMs);
  } catch (error) {
    // Behind any answers still waiting for their flush, so the order holds.
    afterCommit(() => parentPort.postMessage({error: error.message}));
    return;
  }
  afterCommit(() => parentPort.postMessage({results}));
});
