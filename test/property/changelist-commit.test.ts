import fc from "fast-check";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitText } from "../../src/core/text.js";
import { git, snapshot, writeFile } from "../git/fixture.js";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { check } from "./runs.js";
import { applyEdits, edits, finalNewline, lines, textOf } from "./texts.js";

/** Each run commits one changelist through the daemon and builds git's tree for it: a handful in `npm test`. */
const QUICK_RUNS = 4;
const FILES = ["f1.txt", "f2.txt"];

interface Range {
  range: number;
  kind: "added" | "deleted" | "modified";
  start: number;
  end: number;
  head_start: number;
  head_end: number;
}

/** A picked range: whole, or (an added range) some of its lines, by worktree line number. */
interface Pick {
  range: Range;
  lines?: number[];
}

/**
 * HEAD's text with each pick's HEAD lines replaced by its worktree lines (terminators kept). A pick that reaches the
 * end of both versions also carries the final newline as the worktree has it (the daemon's ranges fold a change of
 * the final newline into the range at the end), and lines added after a last line without a newline give it one.
 */
function withPicks(head: string, worktree: string, picks: readonly Pick[]): string {
  const h = splitText(head);
  const w = splitText(worktree);
  const out = h.lines.map((text, i) => ({ text, eol: h.eols[i] as string }));
  for (const { range: r, lines } of [...picks].sort((a, b) => b.range.head_start - a.range.head_start)) {
    const taken = lines ?? Array.from({ length: r.end - r.start + 1 }, (_, i) => r.start + i);
    const at = r.head_start - 1;
    const atEnd = r.head_end === h.lines.length && Math.max(r.end, r.start - 1) === w.lines.length;
    if (taken.length && at === h.lines.length && at > 0 && !out[at - 1].eol) out[at - 1].eol = w.eols[r.start - 2] || "\n";
    out.splice(at, r.head_end - r.head_start + 1, ...taken.map((n) => ({ text: w.lines[n - 1], eol: w.eols[n - 1] as string })));
    if (atEnd && !lines && out.length) out[out.length - 1].eol = w.eols[w.lines.length - 1];
  }
  return out.map((l) => l.text + l.eol).join("");
}

/**
 * The tree git builds for HEAD plus exactly these files' picked changes: in a copy of the repository, each file's patch
 * (HEAD to HEAD-with-the-picked-ranges, as git diff writes it) applied to the index with `git apply --cached`.
 */
function gitTree(dir: string, wanted: Record<string, string>): string {
  const copy = mkdtempSync(path.join(tmpdir(), "tool-layer-oracle-"));
  try {
    execFileSync("cp", ["-a", `${dir}/.`, copy]);
    git(copy, "reset", "-q");
    for (const [rel, text] of Object.entries(wanted)) {
      writeFileSync(path.join(copy, rel), text);
      const patch = execFileSync("git", ["diff", "--no-color", "--", rel], { cwd: copy });
      git(copy, "checkout", "-q", "--", rel);
      if (patch.length) execFileSync("git", ["apply", "--cached", "--whitespace=nowarn", "-"], { cwd: copy, input: patch });
    }
    return git(copy, "write-tree").trim();
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

describe("property: git_commit {changelist} against the tree git builds", () => {
  const ws = tmpWorkspace({ git: true });
  const dir = ws.dir;
  let d: DaemonClient;
  let root: string;

  beforeAll(async () => {
    git(dir, "commit", "-q", "--allow-empty", "-m", "root");
    root = git(dir, "rev-parse", "HEAD").trim();
    d = await startDaemon(dir);
  });
  afterAll(async () => {
    await d.close();
    ws.cleanup();
  });

  it("commits HEAD plus exactly the list's lines (whole ranges, some lines of added ones), the worktree byte for byte as it was", async () => {
    const file = fc.record({
      base: lines(8),
      edits,
      finals: fc.tuple(finalNewline, finalNewline),
      picks: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      lines: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
    });
    await check(
      fc.asyncProperty(fc.tuple(file, file), async (files) => {
        git(dir, "reset", "-q", "--hard", root);
        git(dir, "clean", "-qfdx");
        const lists = await d.ok("git_changelists");
        if (lists.lists.some((l: { name: string }) => l.name === "pick")) await d.ok("git_changelist_edit", { action: "delete", name: "pick" });
        for (const [i, rel] of FILES.entries()) writeFile(dir, rel, textOf(files[i].base, files[i].finals[0]));
        git(dir, "add", "-A");
        git(dir, "commit", "-q", "-m", "base");
        const wanted: Record<string, string> = {};
        for (const [i, rel] of FILES.entries()) {
          const f = files[i];
          const worktree = textOf(applyEdits(f.base, f.edits), f.finals[1]);
          writeFile(dir, rel, worktree);
          const status = await d.ok("git_line_status", { path: rel });
          // Whole ranges, and some lines of an added range (pairing decides a modified range's lines: not here).
          const picks: Pick[] = [];
          (status.ranges as Range[]).forEach((r, k) => {
            if (!f.picks[k % f.picks.length]) return;
            const some = Array.from({ length: r.end - r.start + 1 }, (_, i) => r.start + i).filter((_, i) => f.lines[(k + i) % f.lines.length]);
            picks.push(r.kind === "added" && some.length ? { range: r, lines: some } : { range: r });
          });
          if (!picks.length) continue;
          const whole = picks.filter((p) => !p.lines).map((p) => p.range.range);
          const lines = picks.flatMap((p) => p.lines ?? []);
          if (whole.length) await d.ok("git_changelist_mark", { path: rel, hash: status.hash, ranges: whole, changelist: "pick" });
          if (lines.length) await d.ok("git_changelist_mark", { path: rel, hash: status.hash, lines, changelist: "pick" });
          wanted[rel] = withPicks(git(dir, "show", `HEAD:${rel}`), worktree, picks);
        }
        if (!Object.keys(wanted).length) return;
        const before = snapshot(dir).files;
        const expected = gitTree(dir, wanted);
        const r = await d.ok("git_commit", { message: "the picked lines", changelist: "pick" });
        expect(git(dir, "rev-parse", `${r.commit}^{tree}`).trim()).toBe(expected);
        expect(snapshot(dir).files).toEqual(before);
        // Nothing else was staged, so the committed files' index entries are the new HEAD's: nothing looks reverted.
        expect(git(dir, "diff", "--cached", "--name-only")).toBe("");
      }),
      QUICK_RUNS,
    );
  });
});
