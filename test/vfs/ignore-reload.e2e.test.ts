import { rmSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash } from "../../src/core/hash.js";
import type { DaemonClient } from "../helpers/daemon.js";
import { writeFile } from "../helpers/tmp.js";
import { at, changes, committedDaemons, waitChange } from "./daemon-changes.js";

/** The paths list_dir shows from the root, folders and files, `depth` levels deep. */
async function listed(d: DaemonClient, depth = 6): Promise<string[]> {
  return (await d.ok("list_dir", { depth })).entries.map((e: { path: string }) => e.path);
}

/**
 * A .gitignore takes effect in the window that reports it: once its fs.changed is out, list_dir (the VFS index) follows
 * the new rules. Each case repeats: the races it guards against depend on how the engine's events fall into windows.
 */
describe.each(["parcel", "chokidar"])("ignore rules written while the daemon runs (%s)", (engine) => {
  const { setup } = committedDaemons(engine, { "a.txt": "a\n" });
  beforeAll(() => initHash());

  it("a .gitignore in a new folder applies as soon as it is reported, even when found by the folder's walk", async () => {
    const { dir, d } = await setup();
    for (let i = 0; i < 6; i++) {
      writeFile(dir, `n${i}/.gitignore`, "gen/\n");
      writeFile(dir, `n${i}/gen/x.txt`, "x\n");
      writeFile(dir, `n${i}/kept.txt`, "k\n");
      await waitChange(d, at(`n${i}/.gitignore`, "created"));
      await waitChange(d, at(`n${i}/kept.txt`, "created"));
      expect(await listed(d)).not.toContain(`n${i}/gen/x.txt`);
      expect(changes(d).map((c) => c.path)).not.toContain(`n${i}/gen/x.txt`);
    }
  });

  it("a root .gitignore applies once reported, and files made and removed meanwhile are reported by their own events", async () => {
    const old = Object.fromEntries(Array.from({ length: 450 }, (_, k) => [`live/old${k}.txt`, `${k}\n`]));
    const { dir, d } = await setup({ "a.txt": "a\n", ...old });
    for (let round = 0; round < 3; round++) {
      writeFile(dir, `ignored${round}/x.txt`, "x\n");
      await waitChange(d, at(`ignored${round}/x.txt`, "created"));
    }
    const made: string[] = [];
    const removed: string[] = [];
    for (let round = 0; round < 3; round++) {
      const rules = `ignored${round}/\n`;
      writeFile(dir, ".gitignore", rules);
      let reported = false;
      const done = waitChange(d, (c) => c.path === ".gitignore" && c.hash === fileHash(Buffer.from(rules))).then(() => (reported = true));
      // Changes keep coming until the .gitignore's window is out, so that some fall while git lists for the new rules;
      // one per round trip to the daemon, so they trickle in (a flood would lengthen the windows).
      while (!reported && made.length < 150 * (round + 1)) {
        const rel = `live/new${made.length}.txt`;
        writeFile(dir, rel, "n\n");
        made.push(rel);
        const gone = `live/old${removed.length}.txt`;
        if (removed.length < 450) {
          rmSync(path.join(dir, gone));
          removed.push(gone);
        }
        await d.ok("list");
      }
      await done;
      const folders = await listed(d, 1); // the root's folders that hold watched files (live/ has hundreds)
      expect(folders).not.toContain(`ignored${round}`);
      if (round > 0) expect(folders).toContain(`ignored${round - 1}`); // no longer ignored: back, without an event
    }
    // Every report of each path, in order. A file made is first reported created and last with its content: under load
    // the test can be preempted between its open and its write, and the daemon then rightly reports the empty file
    // created and then modified (seen in CI). A file removed is last reported deleted.
    const madeHash = fileHash(Buffer.from("n\n"));
    const reports = new Map<string, { kind: string; hash: string | null }[]>();
    const reported = (l: { event?: string; data?: { changes: { path: string; kind: string; hash: string | null }[] } }) => {
      if (l.event === "fs.changed") for (const c of l.data!.changes) reports.set(c.path, [...(reports.get(c.path) ?? []), c]);
      return made.every((p) => reports.get(p)?.at(-1)?.hash === madeHash) && removed.every((p) => reports.get(p)?.at(-1)?.kind === "deleted");
    };
    await d.waitFor(reported, 20_000).catch(() => undefined); // what is missing then shows below
    const shown = (p: string) => `${p}: ${(reports.get(p) ?? []).map((c) => `${c.kind} ${c.hash}`).join(", ") || "never reported"}`;
    const madeWrong = made.filter((p) => reports.get(p)?.[0].kind !== "created" || reports.get(p)?.at(-1)?.hash !== madeHash);
    expect(madeWrong.map(shown)).toEqual([]);
    expect(removed.filter((p) => reports.get(p)?.at(-1)?.kind !== "deleted").map(shown)).toEqual([]);
  });
});
