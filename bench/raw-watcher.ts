/**
 * The raw watcher, the peer of the daemon's VFS: @parcel/watcher subscribed alone on a tree (its .git skipped, as the
 * daemon's tree watcher skips it), in a process of its own so that its RSS is its own. `node raw-watcher.js DIR`:
 * prints `{"ready":true}` once subscribed, then one line per batch, `{"paths":[…]}` (relative to DIR); exits when its
 * stdin closes.
 */
import path from "node:path";
import watcher from "@parcel/watcher";

const dir = process.argv[2];
const print = (msg: object) => process.stdout.write(JSON.stringify(msg) + "\n");
const sub = await watcher.subscribe(
  dir,
  (err, events) => (err ? process.stderr.write(`${err.message}\n`) : print({ paths: events.map((e) => path.relative(dir, e.path)) })),
  { ignore: [".git"] },
);
print({ ready: true });
process.stdin.resume();
process.stdin.on("end", () => void sub.unsubscribe().then(() => process.exit(0)));
