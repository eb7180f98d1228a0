/**
 * Whether parcel, in this process (the watcher host), has handed over every inotify event queued so far, read from the
 * kernel's view of the process's threads (/proc/self/task). parcel 2.6.0 on Linux (InotifyBackend.cc, Debounce.cc): a
 * poll thread reads the inotify queue and wakes a debounce thread, which queues the batch for the JavaScript thread
 * (or holds it for its 50 ms batch once one went out in the last half second). The kernel queues an event in the write
 * itself and wakes the poll thread then, so a thread that sleeps has done what woke it: when every thread but the
 * caller was asleep at one instant, the poll thread among them in its poll, every event queued before that instant was
 * read, and its batch is queued for this thread or held by the debounce (which only follows a batch handed over).
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";

/** parcel's poll: its pipe and the inotify descriptor. x86-64 has poll and ppoll, arm64 only ppoll. */
const POLL_FDS = "0x2";
const POLL_SYSCALLS: Record<string, readonly string[]> = { x64: ["7", "271"], arm64: ["73"] };

const TASKS = "/proc/self/task";

function threadIds(): string[] {
  try {
    return readdirSync(TASKS);
  } catch {
    return [];
  }
}

/**
 * Node's own threads, there before this module loaded and so before parcel could start any (V8's workers, which wake
 * for garbage collection at any time, the inspector's): they carry no event, and looking at them costs a third of a
 * look. parcel's, and anything started later, are looked at.
 */
const NODE_THREADS = new Set(threadIds());

/** A thread's context switches while it sleeps, or null when it runs, waits to run, or is in the disk's wait. */
function sleepingSwitches(tid: string): string | null {
  const status = readFileSync(`${TASKS}/${tid}/status`, "utf8");
  if (!/^State:\s+S/m.test(status)) return null;
  const switches = status.match(/^(?:nonvoluntary|voluntary)_ctxt_switches:\s+\d+$/gm);
  return switches ? switches.join(",") : null;
}

function inParcelPoll(tid: string): boolean {
  const [nr, , nfds] = readFileSync(`${TASKS}/${tid}/syscall`, "utf8").trim().split(" ");
  return (POLL_SYSCALLS[process.arch] ?? []).includes(nr) && nfds === POLL_FDS;
}

/**
 * True when every other thread of this process (but Node's own) slept through the call (asleep at its first look and
 * its last, with no context switch between) and one of them sat in parcel's poll meanwhile; false when one ran, none polled, or /proc does
 * not say (another system: the caller waits as before).
 */
export function parcelThreadsAsleep(): boolean {
  try {
    const caller = readlinkSync("/proc/thread-self").split("/").pop();
    const tids = readdirSync(TASKS).filter((t) => t !== caller && !NODE_THREADS.has(t));
    const before = tids.map(sleepingSwitches);
    if (before.includes(null)) return false;
    const polling = tids.some(inParcelPoll);
    return polling && tids.every((t, i) => sleepingSwitches(t) === before[i]);
  } catch {
    return false; // a thread ended meanwhile, or no /proc
  }
}
