import fc from "fast-check";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitText } from "../../src/core/text.js";
import { OrtRepo } from "../core/merge/git-ref.js";
import { conflictingBranches, git, operationState, read, resetRepo } from "../git/fixture.js";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { CLEANUP_MS, check, runs } from "./runs.js";

/** Each run is a real merge, listing, resolve and abort through the daemon: a handful in `npm test`. */
const QUICK_RUNS = 4;
import { threeVersions } from "./texts.js";

/** The content of a rendered `N|TAG content` line. */
const content = (l: string) => l.slice(l.indexOf(" ") + 1);
const stage = (dir: string, n: number) => execFileSync("git", ["show", `:${n}:f.txt`], { cwd: dir, encoding: "utf8" });

/** merge-ort's conflict blocks for these versions, by their lines' contents (diff3 style, as merge-tree writes them). */
function gitBlocks(text: string): { ours: string[]; base: string[]; theirs: string[] }[] {
  const out: { ours: string[]; base: string[]; theirs: string[] }[] = [];
  let block: (typeof out)[number] | null = null;
  let part: "ours" | "base" | "theirs" = "ours";
  const marker = (l: string, ch: string) => l.startsWith(ch.repeat(7)) && (l.length === 7 || l[7] === " ");
  for (const l of splitText(text).lines) {
    if (marker(l, "<")) (block = { ours: [], base: [], theirs: [] }), (part = "ours");
    else if (block && marker(l, "|")) part = "base";
    else if (block && marker(l, "=")) part = "theirs";
    else if (block && marker(l, ">")) out.push(block), (block = null);
    else if (block) block[part].push(l);
  }
  return out;
}

describe("property: conflicts through the daemon against git merge", () => {
  let dir: string;
  let cleanup: () => void;
  let d: DaemonClient;
  let root: string;
  const ort = new OrtRepo();

  beforeAll(async () => {
    ({ dir, cleanup } = tmpWorkspace({ git: true }));
    git(dir, "commit", "-q", "--allow-empty", "-m", "root");
    root = git(dir, "rev-parse", "HEAD").trim();
    d = await startDaemon(dir);
  });
  // After a fuzz run the repositories hold tens of thousands of loose objects: removing them takes a while.
  afterAll(async () => {
    await d.close();
    cleanup();
    ort.cleanup();
  }, CLEANUP_MS);

  it("git_conflicts lists git's blocks from the index stages, a take is spliced exactly, and an abort restores the start", async () => {
    let stopped = 0;
    const sample = fc.record({ v: threeVersions, take: fc.constantFrom("ours", "theirs", "base", "both"), pick: fc.nat() });
    await check(
      fc.asyncProperty(sample, async ({ v, take, pick }) => {
        resetRepo(dir, root);
        conflictingBranches(dir, { "f.txt": v.base }, { "f.txt": v.ours }, { "f.txt": v.theirs });
        const start = operationState(dir);
        const r = await d.call("git_merge", { ref: "topic", auto_resolve: false });
        const merged = ort.merge(v.base, v.ours, v.theirs);
        if (r.success) {
          expect(gitBlocks(merged)).toEqual([]);
          expect(read(dir, "f.txt")).toBe(merged);
          return;
        }
        expect(r.result.code).toBe("CONFLICT");
        stopped++;
        // The stages are the three versions, and the blocks are merge-ort's.
        expect([stage(dir, 1), stage(dir, 2), stage(dir, 3)]).toEqual([v.base, v.ours, v.theirs]);
        const [file] = (await d.ok("git_conflicts", { path: "f.txt" })).files;
        const listed = file.blocks.map((b: { ours: string[]; base: string[]; theirs: string[] }) => ({
          ours: b.ours.map(content),
          base: b.base.map(content),
          theirs: b.theirs.map(content),
        }));
        expect(listed).toEqual(gitBlocks(merged));

        // A take replaces exactly its block's region; a region git shared among blocks is rewritten whole, so skip those.
        const alone = file.blocks.filter((b: { shares_region_with?: number[] }) => !b.shares_region_with);
        if (alone.length) {
          const b = alone[pick % alone.length];
          const before = splitText(read(dir, "f.txt"));
          await d.ok("git_conflict_resolve", { path: "f.txt", hash: file.hash, block: b.block, take });
          const after = splitText(read(dir, "f.txt"));
          const side = take === "both" ? [...b.ours, ...b.theirs] : b[take];
          const [s, e] = b.lines;
          expect(after.lines).toEqual([...before.lines.slice(0, s - 1), ...side.map(content), ...before.lines.slice(e)]);
          expect(after.eols.slice(0, s - 1)).toEqual(before.eols.slice(0, s - 1));
          const tail = before.lines.length - e;
          if (tail > 1) expect(after.eols.slice(-tail, -1)).toEqual(before.eols.slice(-tail, -1));
        }
        await d.ok("git_merge", { abort: true });
        expect(operationState(dir)).toEqual(start);
      }),
      QUICK_RUNS,
    );
    // A handful of runs may all merge cleanly; a fuzz run of many must have stopped on conflicts.
    if (runs(QUICK_RUNS) >= 50) expect(stopped).toBeGreaterThan(0);
  });
});
