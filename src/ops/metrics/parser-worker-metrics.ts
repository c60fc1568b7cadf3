import type {ParserWorkers} from "../../lib/parser-workers.js";
import {WORKER_CRASH_KINDS} from "../../lib/supervised-worker.js";
import type {MetricFamily} from "./exposition.js";

/** The supervised parser workers (docs/architecture.md, "Bulkheads") as metric families, one series per worker. */
export function parserWorkerFamilies(workers: ParserWorkers): MetricFamily[] {
  const reports = workers.reports();
  const per = (value: (report: (typeof reports)[number]) => number) =>
    reports.map((report) => ({labels: {worker: report.name}, value: value(report)}));
  return [
    {
      name: "klaxon_parser_worker_up",
      type: "gauge",
      help: "1 while the parser worker serves, 0 while it restarts after a crash.",
      samples: per((report) => (report.running ? 1 : 0))
    },
    {
      name: "klaxon_parser_worker_crashes_total",
      type: "counter",
      help: "Parser workers ended by a throw, a hang, running out of memory or an exit, since start.",
      samples: reports.flatMap((report) =>
        WORKER_CRASH_KINDS.map((kind) => ({labels: {worker: report.name, kind}, value: report.crashes[kind]}))
      )
    },
    {
      name: "klaxon_parser_worker_restarts_total",
      type: "counter",
      help: "Parser workers started again after a crash, since start.",
      samples: per((report) => report.restarts)
    },
    {
      name: "klaxon_parser_worker_dropped_total",
      type: "counter",
      help: "Input refused unread because no parser worker ran or its queue was full, since start.",
      samples: per((report) => report.dropped)
    },
    {
      name: "klaxon_parser_worker_lost_total",
      type: "counter",
      help: "Input that was inside a parser worker when it crashed, since start.",
      samples: per((report) => report.lostInCrash)
    },
    {
      name: "klaxon_parser_worker_input_total",
      type: "counter",
      help: "The door's own counts by event (SNMP: datagrams, replays_refused, invalid_events), since start.",
      samples: reports.flatMap((report) =>
        Object.entries(report.counters).map(([event, value]) => ({labels: {worker: report.name, event}, value}))
      )
    }
  ];
}
