import { execFileSync } from "node:child_process";
import { existsSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseStatus } from "../../src/git/status.js";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";
import { check } from "./runs.js";

const FILES = ["a.txt", "b.txt", "src/c.txt", "src/d.txt", "src/deep/e.txt"];
const CONTENTS = ["one\n", "two\n", "three\n"];

type Op = { kind: "write" | "delete" | "touch" | "add" | "restore"; file: number } | { kind: "write"; file: number; content: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("write" as const), file: fc.nat(FILES.length), content: fc.nat(CONTENTS.length - 1) }),
  fc.record({ kind: fc.constantFrom("delete" as const, "touch" as const, "add" as const, "restore" as const), file: fc.nat(FILES.length) }),
);

/** git's own word, without optional locks (a plain `git status` would refresh the index and so change what is tested). */
function oracle(dir: string) {
  const s = parseStatus(git(dir, "--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch", "--ignore-submodules=dirty"));
  return { head: s.head, branch: s.branch, staged: s.staged, unstaged: s.unstaged, untracked: s.untracked, conflicted: s.conflicted };
}

/** The file index FILES.length is one that is never committed (created, then maybe added). */
const fileName = (i: number) => FILES[i] ?? "new/untracked.txt";

/**
 * git_status kept live (src/git/live-status.ts) against `git status --porcelain=v2` after random edits made outside the
 * daemon: writes, deletes, touches that keep the content, `git add` and `git checkout --`. After each batch a marker
 * file is written last and its fs.changed awaited: the watcher reports in order, so everything before it is reported.
 */
describe("git_status live, against git status --porcelain=v2", () => {
  const ws = tmpWorkspace({ git: true, files: Object.fromEntries(FILES.map((f) => [f, "base\n"])) });
  git(ws.dir, "add", "-A");
  git(ws.dir, "commit", "-qm", "base");
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));
  let round = 0;

  function apply(o: Op): void {
    const rel = fileName(o.file);
    const abs = path.join(ws.dir, rel);
    if (o.kind === "write") {
      execFileSync("mkdir", ["-p", path.dirname(abs)]);
      writeFileSync(abs, CONTENTS["content" in o ? o.content : 0]);
    } else if (o.kind === "delete") rmSync(abs, { force: true });
    else if (o.kind === "touch" && existsSync(abs)) utimesSync(abs, new Date(), new Date(Date.now() + 60_000 * ++round));
    // a path neither on disk nor in the index is no pathspec git accepts: nothing to add
    else if (o.kind === "add" && (existsSync(abs) || git(ws.dir, "ls-files", "--", rel) !== "")) git(ws.dir, "add", "-A", "--", rel);
    else if (o.kind === "restore" && o.file < FILES.length) git(ws.dir, "checkout", "-q", "HEAD", "--", rel);
  }

  it("agrees after every batch of random edits, and the repeat answers from memory", { timeout: 240_000 }, async () => {
    await check(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 6 }), async (ops) => {
        for (const o of ops) apply(o);
        const marker = `marker ${++round}\n`;
        const from = d.lines.length;
        writeFileSync(path.join(ws.dir, "zz-marker.txt"), marker);
        await d.waitFor(
          (l) => l.event === "fs.changed" && d.lines.indexOf(l) >= from && l.data.changes.some((c: { path: string }) => c.path === "zz-marker.txt"),
          20_000,
        );
        const first = await d.ok("git_status");
        const expected = oracle(ws.dir);
        expect({
          head: first.head,
          branch: first.branch,
          staged: first.staged,
          unstaged: first.unstaged,
          untracked: first.untracked,
          conflicted: first.conflicted,
        }).toEqual(expected);
        const again = await d.ok("git_status");
        expect(again.text).toBe(first.text);
        expect(again.staged).toEqual(expected.staged);
        expect(again.unstaged).toEqual(expected.unstaged);
      }),
      10,
    );
  });
});
