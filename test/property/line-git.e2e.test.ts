/**
 * Issue 20, properties (a) and (c) end to end: the real daemon (one, shared by every run) on a real repository, random
 * files under random line-ending settings (none, `eol=crlf`, `text=auto`, `core.autocrlf=true`), with BOMs, CRLF mixes,
 * no final newline, new and deleted files. Each run stages, unstages or rolls back through the tools and compares with
 * what git itself builds in a copy of the repository made before the call: `git apply --cached` of git's own hunks for
 * a selection, `git add` for everything, HEAD's entry for a full unstage, `git checkout` for a full rollback; staging
 * never touches the worktree. And file_write batches: the file on disk and the diff against git apply.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { initHash, tagOf } from "../../src/core/hash.js";
import { eolStyle, splitText } from "../../src/core/text.js";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { git, writeFile } from "../git/fixture.js";
import { checkedOut, gitAddOf, indexEntry } from "../git/line-oracle.js";
import { applyPatch, changesOf, gitRun, scratch } from "./git-oracle.js";
import { check } from "./runs.js";
import { type Version, bytesOf, edited, version, versionEdit } from "./versions.js";

await initHash();
const tmp = scratch();
afterAll(tmp.cleanup);

const ws = tmpWorkspace({ git: true, files: { "README.md": "readme\n" } });
const dir = ws.dir;
git(dir, "add", "-A");
git(dir, "commit", "-qm", "initial");
let d: DaemonClient;
daemonForSuite(ws, (c) => (d = c));

type Setting = "none" | "eol=crlf" | "text=auto" | "autocrlf";
let serial = 0;

/** Puts the repository in a run's state: `rel` under `setting`, HEAD, the index and the worktree as given (null: none). */
function prepare(setting: Setting, head: Version | null, index: Version | null, worktree: Version | null): string {
  const rel = `run${++serial}.txt`;
  const attrs = setting === "eol=crlf" || setting === "text=auto" ? `${rel} ${setting}\n` : "";
  writeFile(dir, ".git/info/attributes", attrs);
  if (setting === "autocrlf") git(dir, "config", "core.autocrlf", "true");
  else spawnSync("git", ["config", "--unset-all", "core.autocrlf"], { cwd: dir });
  if (head) {
    writeFile(dir, rel, bytesOf(head));
    git(dir, "add", "--", rel);
    git(dir, "commit", "-qm", `head of ${rel}`);
  }
  if (index !== head) {
    if (index) {
      writeFile(dir, rel, bytesOf(index));
      git(dir, "add", "--", rel);
    } else git(dir, "rm", "-q", "--cached", "--", rel);
  }
  if (worktree) writeFile(dir, rel, bytesOf(worktree));
  else rmSync(path.join(dir, rel), { force: true });
  return rel;
}

/** A copy of the repository as it is now, where `work` runs git; removed after. */
function inCopy<T>(work: (copy: string) => T): T {
  const copy = `${dir}-copy`;
  execFileSync("cp", ["-a", dir, copy]);
  try {
    return work(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/**
 * What git says of an index: the entries with their flags (`ls-files -s --debug` without stat data, which is the
 * checkout's), the status of `rel`, and the tree written from it (the index's cache tree, where valid, is taken as it
 * is). Only rel's status: the fixture rewrites files within the tick git stamped them, so another file's stat-clean
 * entry can hide its change from git itself (racy git), and the copy's new inodes show it.
 */
function indexView(repo: string, rel: string): string {
  const debug = git(repo, "ls-files", "-s", "--debug")
    .replace(/^ {2}(ctime|mtime|dev|uid):.*\n/gm, "")
    .replace(/^ {2}size: \d+\t/gm, "  ");
  return [debug, git(repo, "status", "--porcelain=v2", "--untracked-files=no", "--", rel), git(repo, "write-tree")].join("\n");
}

/**
 * The index entry `git apply --cached` of git's own -U0 hunks of `rel` that overlap the chosen 1-based ranges makes,
 * and the index's view after it (indexView).
 */
function gitStagesRanges(
  rel: string,
  chosen: readonly { start: number; end: number; head_start: number; head_end: number }[],
): { entry: string; view: string } | null {
  return inCopy((copy) => {
    const diff = gitRun(copy, [
      "-c",
      "core.quotePath=false",
      "diff",
      "-U0",
      "--histogram",
      "--indent-heuristic",
      "--no-color",
      "--no-ext-diff",
      "--",
      rel,
    ]).stdout.toString("utf8");
    const [head, ...hunks] = diff.split(/\n(?=@@ )/);
    const taken: string[] = [];
    let delta = 0;
    for (const h of hunks) {
      const c = changesOf(h)[0];
      const hit = chosen.filter((r) => (c.start < r.end && r.start - 1 < c.end) || (c.oldStart < r.head_end && r.head_start - 1 < c.oldEnd));
      if (!hit.length) {
        continue;
      }
      const [header, ...body] = h.replace(/\n$/, "").split("\n");
      void header;
      const oldLen = c.oldEnd - c.oldStart;
      const newLen = c.end - c.start;
      const at = c.oldStart + delta;
      taken.push(`@@ -${oldLen ? c.oldStart + 1 : c.oldStart},${oldLen} +${newLen ? at + 1 : at},${newLen} @@\n${body.join("\n")}\n`);
      delta += newLen - oldLen;
    }
    if (!taken.length) return null;
    const patch = `${head
      .split("\n")
      .filter((l) => l.startsWith("--- ") || l.startsWith("+++ "))
      .join("\n")}\n${taken.join("")}`;
    execFileSync("git", ["apply", "--cached", "--unidiff-zero", "-"], { cwd: copy, input: patch });
    return { entry: indexEntry(copy, rel), view: indexView(copy, rel) };
  });
}

const setting = fc.constantFrom<Setting>("none", "none", "eol=crlf", "text=auto", "autocrlf");
const finalNewline = (v: Version | null) => !v?.lines.length || v.eols[v.eols.length - 1] !== "";
/** A file with no line terminator at all: its lines take the one git checkout writes (git_rollback_lines). */
const noLineEnds = (b: Buffer) => eolStyle(splitText(b.toString("utf8")).eols) === "none";
const headEntry = (rel: string) => git(dir, "ls-tree", "HEAD", "--", rel).replace(/^(\d+) blob (\w+)\t.*\n?$/, "$1 $2 0\t") + rel;

const runCase = fc.record({
  setting,
  head: fc.option(version({ max: 12 }), { nil: null, freq: 6 }),
  edits: fc.array(versionEdit, { maxLength: 4 }),
  staged: fc.boolean(),
  deleted: fc.constantFrom(false, false, false, false, true),
  op: fc.constantFrom("stage ranges", "stage all", "unstage all", "rollback all"),
  mask: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
});

describe("line git through the daemon against git (issue 20)", () => {
  it("stages, unstages and rolls back what git builds from the same selection, leaving the worktree to rollback", async () => {
    await check(
      fc.asyncProperty(runCase, async ({ setting: s, head, edits, staged, deleted, op, mask }) => {
        const base = head ?? { bom: false, lines: [], eols: [] };
        const work = deleted ? null : edited(base, edits);
        const index = op === "unstage all" ? work : staged && work && op !== "stage ranges" ? edited(base, edits.slice(0, 1)) : head;
        // Cheap checks first: every run costs a commit and a few calls.
        fc.pre(!bytesOf(base).equals(work ? bytesOf(work) : Buffer.alloc(0)) || (head === null) !== (work === null));
        if (op === "rollback all") fc.pre(head !== null && work !== null);
        // git's hunks are our ranges where both versions end with a newline (line-diff.test.ts) and have the same BOM.
        if (op === "stage ranges") fc.pre(work !== null && finalNewline(head) && finalNewline(work) && base.bom === work.bom);
        const rel = prepare(s, head, index, work);
        const before = work ? readFileSync(path.join(dir, rel)) : null;
        const status = await d.call("git_line_status", { path: rel });
        expect(status.success, JSON.stringify(status.result)).toBe(true);
        const { hash, ranges } = status.result as {
          hash: string | null;
          ranges: { range: number; start: number; end: number; head_start: number; head_end: number }[];
        };
        // A CRLF checkout of an LF file under conversion may show no change at all.
        if (!ranges.length) return;

        if (op === "stage ranges") {
          const picked = ranges.filter((r) => mask[r.range % mask.length]);
          const chosen = picked.length ? picked : ranges.slice(0, 1);
          const expected = gitStagesRanges(rel, chosen);
          const r = await d.call("git_stage_lines", { path: rel, hash, ranges: chosen.map((x) => x.range) });
          expect(r.success, JSON.stringify(r.result)).toBe(true);
          if (expected !== null) {
            expect(indexEntry(dir, rel)).toBe(expected.entry);
            // The daemon writes this index itself (index-write.ts): git reads it as the one git apply wrote.
            expect(indexView(dir, rel)).toBe(expected.view);
          }
        } else if (op === "stage all") {
          const expected = gitAddOf(dir, rel, before);
          const r = await d.call("git_stage_lines", { path: rel, hash, ranges: ranges.map((x) => x.range) });
          // Everything already staged: nothing to do, and git add would change nothing either.
          if (!r.success) expect([r.result.code, indexEntry(dir, rel)]).toEqual(["NO_CHANGE", expected]);
          // Every range taken is the whole file only where the index held nothing else (else: those ranges staged).
          else if (index === head) expect(indexEntry(dir, rel)).toBe(expected);
        } else if (op === "unstage all") {
          const expected = head ? headEntry(rel) : "";
          await d.ok("git_unstage_lines", { path: rel, hash, ranges: ranges.map((x) => x.range) });
          expect(indexEntry(dir, rel)).toBe(expected);
        } else {
          const expected = checkedOut(dir, rel);
          await d.ok("git_rollback_lines", { path: rel, hash });
          const now = readFileSync(path.join(dir, rel));
          // The worktree's BOM stays and, where git converts, its line endings (SPEC 4, line-git.md: a CRLF git does not
          // see is no change to roll back): compare around them, and byte for byte where neither applies.
          const plain = (b: Buffer) =>
            b
              .toString("utf8")
              .replace(/^\ufeff/, "")
              .replace(/\r\n/g, "\n");
          expect(plain(now)).toBe(plain(expected));
          if (work!.bom === head!.bom && (s === "none" || noLineEnds(before!))) expect(now.toString()).toBe(expected.toString());
        }
        if (op !== "rollback all") expect(work ? readFileSync(path.join(dir, rel)).equals(before!) : !existsSync(path.join(dir, rel))).toBe(true);
      }),
      6,
    );
  }, 240_000);

  it("writes the file the edits make, and a diff git apply takes to make it", async () => {
    await check(
      fc.asyncProperty(
        version({ max: 12 }),
        fc.array(fc.tuple(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.constantFrom("x", "  y();", "")), { minLength: 1, maxLength: 3 }),
        async (doc, inserts) => {
          const rel = `write${++serial}.txt`;
          writeFileSync(path.join(dir, rel), bytesOf(doc));
          const read = await d.ok("file_read", { path: rel });
          // Inserts after distinct lines (or at the top of an empty file), by line:tag anchors.
          const n = doc.lines.length;
          const points = [...new Set(inserts.map(([at]) => Math.floor(at * (n + 1))))];
          const edits = points.map((p, k) =>
            n === 0
              ? { type: "insert", content: inserts[k][1] }
              : p === 0
                ? { type: "insert", endline: `1:${tagOf(doc.lines[0])}`, content: inserts[k][1] }
                : { type: "insert", startline: `${p}:${tagOf(doc.lines[p - 1])}`, content: inserts[k][1] },
          );
          const r = await d.ok("file_write", { path: rel, hash: read.hash, edits: n === 0 ? edits.slice(0, 1) : edits });
          const after = readFileSync(path.join(dir, rel));
          // Applied outside the repository: its line-ending settings (a staging run may leave core.autocrlf) are not the file's.
          const git = applyPatch(tmp.dir, bytesOf(doc), r.diff.replaceAll(` a/${rel}\n`, " a/f\n").replaceAll(` b/${rel}\n`, " b/f\n"));
          expect(git.refused).toBe("");
          expect(git.after!.equals(after)).toBe(true);
        },
      ),
      4,
    );
  }, 120_000);
});
