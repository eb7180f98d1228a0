/**
 * The file watcher host: @parcel/watcher in a process of its own, started by the daemon's WatcherHost
 * (watcher-client.ts). Inside the daemon, a signal that lands on parcel's poll thread (SIGCHLD, from the daemon's many
 * child processes) makes its Linux backend throw "Unable to poll: Interrupted system call" and end the thread
 * (parcel-bundler/watcher#253, unfixed in 2.6.0), and an unsubscribe after that once deadlocked the daemon's main thread.
 * This process starts no children, so no SIGCHLD comes here.
 *
 * The protocol (watcher-protocol.ts) is JSON lines: requests on stdin, answers and batches of events on stdout. It
 * exits when stdin ends (the daemon stopped it, or is gone).
 */
import { createInterface } from "node:readline";
import watcher, { type AsyncSubscription, type Event } from "@parcel/watcher";
import { parcelThreadsAsleep } from "./host-threads.js";
import { type HostLine, type HostRequest, encodeEvents } from "./watcher-protocol.js";

const send = (line: HostLine) => process.stdout.write(`${JSON.stringify(line)}\n`);
const errorOf = (e: unknown) => ({ message: e instanceof Error ? e.message : String(e), code: (e as NodeJS.ErrnoException | undefined)?.code });

/** `drained` looks at parcel's threads every millisecond for this long, then answers false (the daemon's timed wait is 75 ms). */
const DRAIN_LOOKS_MS = 50;

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Whether parcel's threads were seen asleep (host-threads.ts), with every batch they had queued for this thread by then
 * written first: such a batch is run in the loop's poll phase, and two turns hold at least one whole poll phase that
 * began after the look.
 */
async function drained(): Promise<boolean> {
  for (const until = Date.now() + DRAIN_LOOKS_MS; Date.now() < until; ) {
    if (parcelThreadsAsleep()) {
      await nextTurn();
      await nextTurn();
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return false;
}

/** Answers the requests of one daemon; `subscriptions`: its live ones by number. */
async function handle(req: HostRequest, subscriptions: Map<number, AsyncSubscription>): Promise<void> {
  try {
    if (req.op === "drained") {
      send({ r: req.r, drained: await drained() });
      return;
    }
    if (req.op === "subscribe") {
      const sub = await watcher.subscribe(
        req.dir,
        (err: Error | null, events: Event[]) => {
          if (err) send({ s: req.s, error: errorOf(err) });
          else if (events.length) send({ s: req.s, e: encodeEvents(req.dir, events) });
        },
        { ignore: req.ignore },
      );
      subscriptions.set(req.s, sub);
    } else if (req.op === "unsubscribe") {
      const sub = subscriptions.get(req.s);
      subscriptions.delete(req.s);
      await sub?.unsubscribe();
    }
    send({ r: req.r });
  } catch (e) {
    send({ r: req.r, error: errorOf(e) });
  }
}

function serve(): void {
  const subscriptions = new Map<number, AsyncSubscription>();
  createInterface({ input: process.stdin })
    .on("line", (line) => void handle(JSON.parse(line) as HostRequest, subscriptions))
    .on("close", () => process.exit(0));
}

serve();
