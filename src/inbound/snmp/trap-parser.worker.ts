import {serveSupervisedWork, supervisedWorkerData} from "../../lib/supervised-worker.js";
import {TrapReader} from "./trap-reading.js";
import type {ParserData, ParserEvent, ParserWork} from "./trap-types.js";

// The SNMP trap parser's thread (design rule 14): BER from the LAN is read here, never on the
// thread that pages. Every datagram gets exactly one event; a throw that escapes ends this worker
// and the TrapListener's supervisor starts a fresh one.
const reader = new TrapReader(supervisedWorkerData<ParserData>());

serveSupervisedWork<ParserWork, ParserEvent>((work, emit) => {
  if (work.kind === "credentials") return reader.apply(work.credentials);
  emit(reader.read(Buffer.from(work.bytes), work.from, work.size, work.engineTime));
});
