/**
 * Large git workspaces for the scale figures (issue 23), made with `git fast-import` (a blob per distinct content, one
 * tree of a commit, no file written until the checkout) and cached under the temp folder by their parameters, so a
 * later run reuses the checked-out tree. Each has branch `main` checked out and branch `flood`, which differs from it in
 * `flood` files (spread over the tree); optionally branch `history`, a long history of small commits for a slow git_log.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { once } from "node:events";
import { exec, fmt } from "./lib.js";
import { generateTree } from "./search-paths.js";

export interface TreeParams {
  /** A name for the cache folder and the output: "100k", "1M". */
  name: string;
  /** Generated files; two more at the root (README.md, package.json). */
  files: number;
  folders: number;
  /** Files that differ between main and flood. */
  flood: number;
  /** Commits of branch `history` (0: none). */
  history: number;
}

export const TREES = {
  "100k": { name: "100k", files: 100_000, folders: 4_400, flood: 50_000, history: 60_000 },
  "1M": { name: "1M", files: 1_000_000, folders: 44_000, flood: 50_000, history: 0 },
} satisfies Record<string, TreeParams>;

/** Bumped whenever what a tree contains changes, so an old cache is not taken for the new tree. */
const GENERATOR_VERSION = 1;
/** A pattern only a few files contain (about 1 in 50,000): a search must read every file to find them all. */
export const RARE_IDENTIFIER = "handleRefundWebhook";
const RARE_EVERY = 50_000;

export interface Tree {
  params: TreeParams;
  /** The repository's worktree. */
  dir: string;
  /** Every tracked path (the root's two files included), in generation order. */
  paths: string[];
  /** The paths that differ between main and flood. */
  floodPaths: string[];
  /** How long `git checkout` of main took when the tree was built (ms), and when that was. */
  checkoutMs: number;
  builtAt: string;
  /** Restores main, clean, and releases the tree; never throws (a failure is logged, and the next use repairs it). */
  release(): Promise<void>;
}

/** Realistic small files of each kind; a file's content is picked by its extension and its index. */
const CONTENTS: Record<string, string[]> = {
  ts: [
    'import { config } from "../config.js";\n\nexport function handle(input: string): string {\n  if (!input) return config.fallback;\n  return input.trim().toLowerCase();\n}\n',
    'export interface Options {\n  name: string;\n  retries?: number;\n  timeoutMs?: number;\n}\n\nexport const defaults: Options = { name: "default", retries: 3, timeoutMs: 5000 };\n',
    'import { describe, expect, it } from "vitest";\nimport { handle } from "./handler.js";\n\ndescribe("handle", () => {\n  it("trims", () => {\n    expect(handle("  A ")).toBe("a");\n  });\n});\n',
    "export class Store<T> {\n  private readonly items = new Map<string, T>();\n\n  get(key: string): T | undefined {\n    return this.items.get(key);\n  }\n\n  set(key: string, value: T): void {\n    this.items.set(key, value);\n  }\n}\n",
  ],
  tsx: ['import React from "react";\n\nexport function Card({ title }: { title: string }) {\n  return <div className="card">{title}</div>;\n}\n'],
  js: ['"use strict";\n\nmodule.exports = function format(value) {\n  return String(value).padStart(2, "0");\n};\n'],
  json: ['{\n  "name": "module",\n  "version": "1.0.0",\n  "private": true\n}\n'],
  md: ["# Module\n\nWhat this folder holds and how to use it.\n\n## Usage\n\nImport it from the package root.\n"],
  css: [".card {\n  display: flex;\n  padding: 8px;\n  border-radius: 4px;\n}\n"],
  go: ['package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello")\n}\n'],
  py: ["def handle(value: str) -> str:\n    return value.strip().lower()\n"],
  rs: ["pub fn handle(value: &str) -> String {\n    value.trim().to_lowercase()\n}\n"],
};
const RARE_CONTENT = `export async function ${RARE_IDENTIFIER}(event: unknown): Promise<void> {\n  console.log(event);\n}\n`;
/** What flood's version of a file adds at its end. */
const FLOOD_LINE = "// changed on branch flood\n";

function contentOf(rel: string, i: number): string {
  if (i % RARE_EVERY === RARE_EVERY / 2) return RARE_CONTENT;
  const ext = rel.slice(rel.lastIndexOf(".") + 1);
  const choices = CONTENTS[ext] ?? CONTENTS.md;
  return choices[i % choices.length];
}

const ROOT_FILES: [string, string][] = [
  ["README.md", "# A large generated workspace\n\nMade by bench/big-tree.ts for the scale benchmarks.\n"],
  ["package.json", '{\n  "name": "big-tree",\n  "private": true\n}\n'],
];

function cacheRoot(): string {
  return process.env.BENCH_CACHE_DIR ?? path.join(tmpdir(), "tool-layer-bench-cache");
}

export const git = async (dir: string, ...args: string[]) => (await exec("git", args, { cwd: dir })).stdout;

/** Text to a stream in large writes, waiting for it to drain when its buffer is full. */
class BufferedWriter {
  private buf = "";
  constructor(private readonly stream: NodeJS.WritableStream) {}

  async push(text: string): Promise<void> {
    this.buf += text;
    if (this.buf.length < 1 << 18) return;
    const chunk = this.buf;
    this.buf = "";
    if (!this.stream.write(chunk)) await once(this.stream as NodeJS.EventEmitter, "drain");
  }

  end(): void {
    this.stream.end(this.buf);
  }
}

/** The fast-import stream: the distinct blobs, main's single commit, flood's on top of it, and the history branch. */
async function importStream(stdin: NodeJS.WritableStream, p: TreeParams, paths: string[], floodPaths: Set<string>): Promise<void> {
  const out = new BufferedWriter(stdin);
  const marks = new Map<string, number>();
  const blob = async (content: string): Promise<number> => {
    let mark = marks.get(content);
    if (mark === undefined) {
      marks.set(content, (mark = marks.size + 1));
      await out.push(`blob\nmark :${mark}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
    }
    return mark;
  };
  const main: [string, number][] = [];
  const flood: [string, number][] = [];
  for (const [k, rel] of paths.entries()) {
    const content = k < ROOT_FILES.length ? ROOT_FILES[k][1] : contentOf(rel, k - ROOT_FILES.length);
    main.push([rel, await blob(content)]);
    if (floodPaths.has(rel)) flood.push([rel, await blob(content + FLOOD_LINE)]);
  }
  const mainMark = marks.size + 1;
  const commit = (ref: string, message: string, time: number, extra: string) =>
    out.push(`commit refs/heads/${ref}\n${extra}committer Bench <bench@example.com> ${time} +0000\ndata ${message.length}\n${message}\n`);
  const files = async (entries: [string, number][]) => {
    for (const [rel, mark] of entries) await out.push(`M 100644 :${mark} ${rel}\n`);
    await out.push("\n");
  };
  await commit("main", "main", 1_700_000_000, `mark :${mainMark}\n`);
  await files(main);
  await commit("flood", "flood", 1_700_000_100, "");
  await out.push(`from :${mainMark}\n`);
  await files(flood);
  for (let i = 1; i <= p.history; i++) {
    await commit("history", `history ${i}`, 1_700_001_000 + i, "");
    if (i === 1) await out.push(`from :${mainMark}\n`);
    await out.push(`M 100644 inline hist/f${i % 50}.txt\ndata ${`line ${i}\n`.length}\nline ${i}\n\n`);
  }
  out.end();
}

interface Meta {
  checkoutMs: number;
  builtAt: string;
}

/** Holds the tree for this process: a lock file with our pid; a lock of a process that is gone is taken over. */
function lock(folder: string): () => void {
  const file = path.join(folder, "lock");
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, "utf8"));
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = pid !== process.pid;
    } catch {
      /* gone */
    }
    if (alive) throw new Error(`the cached tree ${folder} is in use by process ${pid}; wait for it or set BENCH_CACHE_DIR`);
  }
  writeFileSync(file, String(process.pid));
  return () => rmSync(file, { force: true });
}

/**
 * The tree for `p`: taken from the cache when it is there and complete (else built, a minute or so for a million files
 * on an idle machine), checked out on main. A tree that an interrupted run left dirty is restored first.
 */
export async function bigTree(p: TreeParams): Promise<Tree> {
  const key = createHash("sha256")
    .update(JSON.stringify({ GENERATOR_VERSION, ...p }))
    .digest("hex")
    .slice(0, 12);
  const folder = path.join(cacheRoot(), `${p.name}-${key}`);
  const dir = path.join(folder, "repo");
  const metaFile = path.join(folder, "meta.json");
  const inUse = path.join(folder, "in-use");
  mkdirSync(folder, { recursive: true });
  const unlock = lock(folder);
  try {
    const paths = [...ROOT_FILES.map(([rel]) => rel), ...generateTree(p.files, p.folders)];
    const stride = Math.max(1, Math.floor(p.files / p.flood));
    const floodPaths = paths
      .slice(ROOT_FILES.length)
      .filter((_, i) => i % stride === 0)
      .slice(0, p.flood);
    let meta: Meta;
    if (existsSync(metaFile)) {
      meta = JSON.parse(readFileSync(metaFile, "utf8")) as Meta;
      if (existsSync(inUse)) {
        const t = performance.now();
        await restore(dir);
        console.log(`${p.name} tree: restored after an interrupted run in ${fmt((performance.now() - t) / 1000)} s`);
      }
      console.log(`${p.name} tree: cached in ${dir} (built ${meta.builtAt}, checkout then ${fmt(meta.checkoutMs / 1000)} s)`);
    } else {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }); // a build that was interrupted
      meta = await build(dir, p, paths, new Set(floodPaths));
      writeFileSync(metaFile, JSON.stringify(meta));
    }
    writeFileSync(inUse, String(process.pid));
    const release = async () => {
      try {
        await restore(dir);
        rmSync(inUse, { force: true });
      } catch (e) {
        console.error(`${p.name} tree: not restored (the next run repairs it): ${(e as Error).message}`);
      } finally {
        unlock();
      }
    };
    return { params: p, dir, paths, floodPaths, ...meta, release };
  } catch (e) {
    unlock();
    throw e;
  }
}

/** Back to main as committed: tracked files reset, anything the suites added removed. */
async function restore(dir: string): Promise<void> {
  await git(dir, "checkout", "-q", "-f", "main");
  await git(dir, "clean", "-q", "-fd");
}

async function build(dir: string, p: TreeParams, paths: string[], floodPaths: Set<string>): Promise<Meta> {
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  await git(dir, "init", "-q", "-b", "main");
  for (const [k, v] of [
    ["user.email", "bench@example.com"],
    ["user.name", "Bench"],
    ["commit.gpgsign", "false"],
    ["gc.auto", "0"],
  ])
    await git(dir, "config", k, v);
  await exec("git", ["fast-import", "--quiet"], { cwd: dir, input: (stdin) => importStream(stdin, p, paths, floodPaths) });
  const imported = performance.now();
  await git(dir, "checkout", "-q", "-f", "main");
  const checkoutMs = performance.now() - imported;
  console.log(
    `${p.name} tree: ${paths.length} files in ${p.folders} folders, flood ${p.flood} files apart, history ${p.history} commits: ` +
      `fast-import ${fmt((imported - t0) / 1000)} s, git checkout ${fmt(checkoutMs / 1000)} s (cached in ${dir})`,
  );
  return { checkoutMs, builtAt: new Date().toISOString() };
}
