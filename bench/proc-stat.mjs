// What a process has used, read from /proc (Linux): shared by the bench process and the load
// generators, which must not load the rest of the harness.

import {readFileSync} from "node:fs";

// USER_HZ is 100 on every Linux this runs on (getconf CLK_TCK).
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU seconds a process has used so far (user + system, all its threads), from /proc/<pid>/stat.
 * CPU per alert is steadier than alerts/s on a shared machine: other processes slow the server
 * down but do not make each alert cost more of its own CPU.
 */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at ") "; utime and stime are the 14th and 15th fields.
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

export function readProcStatus(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field) => {
      const match = text.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
      return match ? Number(match[1]) : null;
    };
    return {rssKb: kb("VmRSS"), hwmKb: kb("VmHWM")};
  } catch {
    return {rssKb: null, hwmKb: null};
  }
}

/** The machine's busy and total CPU seconds so far, all cores, from /proc/stat. */
export function machineCpuSeconds() {
  const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user).
  const total = fields.slice(0, 8).reduce((sum, ticks) => sum + ticks, 0);
  const idle = fields[3] + fields[4];
  return {busy: (total - idle) / CLOCK_TICKS_PER_SECOND, total: total / CLOCK_TICKS_PER_SECOND};
}

/**
 * The main thread's time on a CPU and waiting for one (runnable, on a run queue, not running), in
 * seconds, from /proc/<pid>/task/<pid>/schedstat. On a shared machine the second is the time
 * other processes took from it: a latency that is the machine's, not the code's.
 */
export function mainThreadSchedule(pid) {
  const [runNs, waitNs] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").trim().split(" ").map(Number);
  return {runS: runNs / 1e9, waitS: waitNs / 1e9};
}
