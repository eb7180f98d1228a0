import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { git, tmpWorkspace, writeFile } from "../../helpers/tmp.js";

/** Reference outputs from real git for the pure merge core's tests. */

/** `git merge-file -p --diff3` (Myers, the "eager" level diff3 implies) with labels ours/base/theirs. */
export function gitMergeFile(base: string, ours: string, theirs: string, opts: { markerSize?: number } = {}): { text: string; conflicts: number } {
  const ws = tmpWorkspace();
  try {
    for (const [name, text] of Object.entries({ base, ours, theirs })) writeFileSync(path.join(ws.dir, name), text);
    const args = ["merge-file", "-p", "--diff3", "-L", "ours", "-L", "base", "-L", "theirs"];
    if (opts.markerSize) args.push(`--marker-size=${opts.markerSize}`);
    const r = spawnSync("git", [...args, "ours", "base", "theirs"], { cwd: ws.dir, encoding: "utf8" });
    if (r.status === null || r.status < 0 || r.status > 127) throw new Error(`git merge-file failed: ${r.stderr}`);
    return { text: r.stdout, conflicts: r.status };
  } finally {
    ws.cleanup();
  }
}

export interface RealMerge {
  /** The worktree file git wrote (with its markers). */
  worktree: string;
  /** Index stages 1, 2, 3 of the file. */
  base: string;
  ours: string;
  theirs: string;
}

/**
 * A real `git merge` of a branch that changed `f.txt` to `theirs` into one that changed it to `ours`, both from `base`,
 * in the given conflict style (and .gitattributes, e.g. a conflict-marker-size); the conflicted state it leaves.
 */
export function realMerge(base: string, ours: string, theirs: string, opts: { style?: "merge" | "diff3" | "zdiff3"; attributes?: string } = {}): RealMerge {
  const ws = tmpWorkspace({ git: true });
  try {
    const g = (...args: string[]) => git(ws.dir, ...args);
    if (opts.attributes) writeFile(ws.dir, ".gitattributes", opts.attributes);
    writeFile(ws.dir, "f.txt", base);
    g("add", "-A");
    g("commit", "-qm", "base");
    g("checkout", "-qb", "theirs");
    writeFile(ws.dir, "f.txt", theirs);
    g("commit", "-qam", "theirs");
    g("checkout", "-q", "main");
    writeFile(ws.dir, "f.txt", ours);
    g("commit", "-qam", "ours");
    const r = spawnSync("git", ["-c", `merge.conflictStyle=${opts.style ?? "merge"}`, "merge", "-q", "--no-edit", "theirs"], { cwd: ws.dir, encoding: "utf8" });
    if (r.status === 0) throw new Error("the merge did not conflict");
    const stage = (n: number) => execFileSync("git", ["show", `:${n}:f.txt`], { cwd: ws.dir, encoding: "utf8" });
    return { worktree: readFileSync(path.join(ws.dir, "f.txt"), "utf8"), base: stage(1), ours: stage(2), theirs: stage(3) };
  } finally {
    ws.cleanup();
  }
}

/** The conflict blocks of a diff3-style text with markers of `size` as [ours, base, theirs] line lists. */
export function diff3Blocks(text: string, size = 7): string[][][] {
  const blocks: string[][][] = [];
  let current: string[][] | null = null;
  let part = 0;
  for (const line of text.split("\n")) {
    const run = (ch: string) => line.startsWith(ch.repeat(size)) && (line.length === size || line[size] === " ");
    if (run("<")) (current = [[], [], []]), (part = 0);
    else if (current && run("|")) part = 1;
    else if (current && run("=")) part = 2;
    else if (current && run(">")) blocks.push(current), (current = null);
    else if (current) current[part].push(line);
  }
  return blocks;
}

/** A small deterministic generator (tests must be reproducible). */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 1) / 0x80000000;
  };
}

/** Code-like lines with many repeats ({, }, blank, return), so diffs have choices to make. */
export function randomEdits(rnd: () => number, lines: readonly string[], edits: number): string[] {
  const pool = ["{", "}", "", "return x;", "a", "b", "foo();", "bar();"];
  const out = [...lines];
  for (let k = 0; k < edits; k++) {
    const at = Math.floor(rnd() * (out.length + 1));
    const r = rnd();
    if (r < 0.33) out.splice(at, 1);
    else if (r < 0.66) out.splice(at, 0, pool[Math.floor(rnd() * pool.length)]);
    else if (at < out.length) out[at] = `changed ${Math.floor(rnd() * 1000)}`;
  }
  return out;
}

export function randomFile(rnd: () => number, n: number): string[] {
  const pool = ["{", "}", "", "return x;", "a", "b", "foo();", "bar();"];
  return Array.from({ length: n }, () => (rnd() < 0.6 ? pool[Math.floor(rnd() * pool.length)] : `line ${Math.floor(rnd() * 50)}`));
}

export const joinLines = (lines: readonly string[]) => (lines.length ? lines.join("\n") + "\n" : "");

/** One repository for many merges by git's merge machinery (merge-ort, histogram diff) without touching a worktree. */
export class OrtRepo {
  private readonly ws = tmpWorkspace({ git: true });

  private run(args: string[], input?: string): string {
    const r = spawnSync("git", args, { cwd: this.ws.dir, encoding: "utf8", input });
    if (r.status !== 0 && !(args.includes("merge-tree") && r.status === 1)) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  }

  private commit(text: string, parent?: string): string {
    const blob = this.run(["hash-object", "-w", "--stdin"], text).trim();
    const tree = this.run(["mktree"], `100644 blob ${blob}\tf.txt\n`).trim();
    return this.run(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", "c"]).trim();
  }

  /** The file merge-ort leaves, diff3 style (equal to the inputs' merge when it is clean). */
  merge(base: string, ours: string, theirs: string): string {
    const b = this.commit(base);
    const o = this.commit(ours, b);
    const t = this.commit(theirs, b);
    const tree = this.run(["-c", "merge.conflictStyle=diff3", "merge-tree", "--write-tree", "--name-only", o, t]).split("\n")[0];
    return this.run(["cat-file", "-p", `${tree}:f.txt`]);
  }

  cleanup(): void {
    this.ws.cleanup();
  }
}
