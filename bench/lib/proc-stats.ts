import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = 100;

/**
 * CPU seconds (user + system) a process has used so far, all its threads included, from
 * /proc/<pid>/stat (fields 14 and 15). What process.cpuUsage() would say inside it.
 */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * CPU seconds (user + system) a process's threads have run so far, to the nanosecond: each
 * thread's /proc/<pid>/task/<tid>/schedstat (its first field, time on a CPU), summed. Where
 * processCpuSeconds counts 10 ms ticks, which read a storm of 1,000 bare uWS starts (some 50 ms
 * in all) to within a fifth. A thread that ended is no longer counted: for processes whose
 * threads live as long as they do, as Node's do (V8's platform workers, libuv's pool).
 */
export function threadsCpuSeconds(pid: number): number {
  let nanoseconds = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanoseconds += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read: what it ran is no longer counted.
    }
  }
  return nanoseconds / 1e9;
}

/**
 * A process's main thread so far: its CPU seconds (schedstat, to the nanosecond) and how often it
 * went to sleep (its voluntary context switches: each time it waited, in epoll or on a lock, and
 * was woken again), where the event loop of a Node process runs.
 */
export function mainThreadRun(pid: number): { cpuSeconds: number; sleeps: number } {
  const cpu = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]);
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, "utf8");
  const sleeps = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status)?.[1];
  if (sleeps === undefined) throw new Error(`no voluntary_ctxt_switches for process ${pid}`);
  return { cpuSeconds: cpu / 1e9, sleeps: Number(sleeps) };
}

/** Resident memory of a process in bytes (VmRSS of /proc/<pid>/status). */
export function processRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) * 1024;
}
