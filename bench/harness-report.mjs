// The report helpers: the machine a bench ran on, Markdown tables and number formats.

import {readFileSync} from "node:fs";
import {cpus, freemem, loadavg, totalmem} from "node:os";

function machine() {
  const cpuModel =
    (readFileSync("/proc/cpuinfo", "utf8").match(/^model name\s*:\s*(.+)$/m) ?? [])[1] ?? cpus()[0]?.model ?? "unknown";
  return {
    cpus: cpus().length,
    cpuModel: cpuModel.trim(),
    memGb: (totalmem() / 2 ** 30).toFixed(1),
    freeGb: (freemem() / 2 ** 30).toFixed(1),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    load: loadavg()[0].toFixed(2)
  };
}

export function describeMachine() {
  const box = machine();
  return `machine: ${box.cpus} CPUs (${box.cpuModel}), ${box.memGb} GB RAM (${box.freeGb} GB free), node ${box.node}, ${box.platform}, load average ${box.load}`;
}

export function table(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  const line = (row) => "| " + row.map((cell, column) => String(cell).padEnd(widths[column])).join(" | ") + " |";
  return [
    line(rows[0]),
    "|" + widths.map((width) => "-".repeat(width + 2)).join("|") + "|",
    ...rows.slice(1).map(line)
  ].join("\n");
}

export const fmt = {
  int: (value) => Math.round(value).toLocaleString("en-US"),
  ms: (value) => `${value.toFixed(value < 10 ? 1 : 0)} ms`,
  mb: (value) => `${value.toFixed(1)} MB`
};

export function verdict(ok) {
  return ok ? "PASS" : "MISS";
}

export function average(values) {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
