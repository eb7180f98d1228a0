/**
 * find_file's globs against `rg --files -g GLOB` (the rules find_file promises to follow): random globs from a grammar
 * (`*`, `**`, `?`, classes, alternations, escapes, anchoring, a trailing `/`, negation) on random trees, the same paths.
 * The matcher alone for many cases; through the daemon (the VFS index) for fewer.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { rgPath } from "@vscode/ripgrep";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GlobSyntaxError, pathFilter } from "../../src/search/glob.js";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { at, waitChange } from "../vfs/daemon-changes.js";
import { type TreeFile, treeOf, withIgnoreFiles, writeTree } from "./trees.js";
import { check, runs } from "./runs.js";

const atom = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("a", "b", "c", "ab", ".", "ts", "txt", "é", " ") },
  { weight: 4, arbitrary: fc.constantFrom("*", "?", "**") },
  { weight: 2, arbitrary: fc.constantFrom("[ab]", "[!a]", "[^b]", "[a-c]", "[.]", "[]a]", "[!]]", "[*]", "[-a]", "[a-]") },
  { weight: 2, arbitrary: fc.constantFrom("{a,b}", "{ab,c*}", "{,a}", "{a/b,c}", "{*.ts,b}") },
  { weight: 1, arbitrary: fc.constantFrom("\\*", "\\[a\\]", "\\{b\\}", "\\!", "#", ",", "-", "!") },
  { weight: 1, arbitrary: fc.constantFrom("[z-a]", "[", "{a", "}") }, // invalid: both must refuse
);
const component = fc.array(atom, { minLength: 1, maxLength: 3 }).map((a) => a.join(""));

/** A glob: components joined by `/`, maybe anchored, maybe ending in `/` or `/**`, maybe negated. */
const glob: fc.Arbitrary<string> = fc
  .record({
    parts: fc.array(component, { minLength: 1, maxLength: 3 }),
    lead: fc.constantFrom("", "", "", "/", "**/", "*/"),
    tail: fc.constantFrom("", "", "", "/", "/**", "/*", "\\"), // a dangling `\` is invalid
    negated: fc.boolean(),
  })
  .map(({ parts, lead, tail, negated }) => `${negated ? "!" : ""}${lead}${parts.join("/")}${tail}`);

/** Cases in `npm test`: each is a tree on disk and an rg process (about 90 ms here), through the daemon also a wait for the VFS. */
const MATCHER_RUNS = 40;
const DAEMON_RUNS = 8;

const emptyFiles = treeOf(fc.constant(Buffer.alloc(0)), 12);

/** What rg lists under `dir` with these globs (hidden files in, `extra` flags), or null when it refuses a glob. */
function rgFiles(dir: string, globs: string[], extra: string[] = []): string[] | null {
  const run = spawnSync(rgPath, ["--files", "--no-config", "--hidden", ...extra, ...globs.map((g) => `--glob=${g}`)], { cwd: dir, maxBuffer: 1 << 26 });
  if (run.status === 2 && /error parsing glob/.test(run.stderr.toString())) return null;
  if (run.status !== 0 && run.status !== 1) throw new Error(`rg failed (${run.status}): ${run.stderr}`);
  return run.stdout.toString().split("\n").filter(Boolean).sort();
}

/** The paths of `files` the glob keeps, or null when it is not a glob. */
function ours(files: readonly TreeFile[], g: string): string[] | null {
  let keep: (p: string) => boolean;
  try {
    keep = pathFilter(g);
  } catch (e) {
    if (e instanceof GlobSyntaxError) return null;
    throw e;
  }
  return files
    .map((f) => f.path)
    .filter(keep)
    .sort();
}

/**
 * The paths whose verdict rg and find_file share: rg's globs match bytes, find_file's characters (docs/tools/search.md),
 * so where `?` or a class meets a non-ASCII name (`?` is one byte of `é` to rg) they differ by design.
 */
function comparable(paths: string[] | null, g: string): string[] | null {
  return paths && (/[?[]/.test(g) ? paths.filter((p) => /^[\x00-\x7f]*$/.test(p)) : paths);
}

describe("find_file's globs against rg --files -g", () => {
  it("the matcher keeps the paths rg lists, and refuses the globs rg refuses", async () => {
    await check(
      fc.property(emptyFiles, glob, (files, g) => {
        const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-glob-"));
        try {
          writeTree(dir, files);
          expect(comparable(ours(files, g), g), g).toEqual(comparable(rgFiles(dir, [g], ["--no-ignore"]), g));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      MATCHER_RUNS,
    );
  });

  describe("through the daemon", () => {
    const ws = tmpWorkspace({ git: true });
    let d: DaemonClient;
    let run = 0;
    beforeAll(async () => {
      d = await startDaemon(ws.dir);
    });
    afterAll(async () => {
      await d?.close();
      ws.cleanup();
    });

    it(
      "find_file lists the paths rg lists, from the VFS's live index, .gitignore files written with them included",
      async () => {
        await check(
          fc.asyncProperty(withIgnoreFiles(emptyFiles), glob, async (files, g) => {
            const rel = `r${run++}`;
            writeTree(path.join(ws.dir, rel), files);
            // earlier runs stay: removing folders while parcel re-crawls the tree after a .gitignore change fails its
            // watcher now and then (inotify_add_watch: no such file), and after 5 restarts the VFS stops watching. Both
            // sides are compared on this run's folder.
            const mine = (paths: string[] | null) => comparable(paths, g)?.filter((p) => p.startsWith(`${rel}/`)) ?? null;
            // the VFS reports what it watches: every file rg lists (a wrongly ignored one times out here)
            const watched = rgFiles(ws.dir, ["!.git"], ["--no-ignore-dot"])!.filter((p) => p.startsWith(`${rel}/`));
            for (const p of watched) await waitChange(d, at(p, "created"));
            const r = await d.call("find_file", { glob: g, path: rel, limit: 1000 });
            if (!r.success && r.result.code !== "INVALID_PARAMS") throw new Error(`find_file failed: ${JSON.stringify(r.result)}`);
            const found = r.success ? (r.result.paths as string[]) : null; // null: refused as an invalid glob, as rg refuses it
            // rg's -g overrides ignore rules (`a*` lists a gitignored `a`); find_file (and search) keep ignored files out
            const globbed = rgFiles(ws.dir, [g, "!.git"], ["--no-ignore-dot"]);
            expect(mine(found), g).toEqual(mine(globbed?.filter((p) => watched.includes(p)) ?? null));
          }),
          DAEMON_RUNS,
        );
      },
      runs(DAEMON_RUNS) * 5_000,
    );
  });
});
