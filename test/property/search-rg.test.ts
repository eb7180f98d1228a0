/**
 * `search` through the real daemon against `rg --json` on random small trees: the same files, the same matching and
 * context lines, each line's tag and text as the file has it, the first match inside the window of a cut line, and the
 * file's hash. rg is the oracle for what matches; the daemon adds hashes, tags and cutting.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { rgPath } from "@vscode/ripgrep";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash, tagOfBytes } from "../../src/core/hash.js";
import { MAX_SEARCH_LINE_CHARS, NOT_UTF8_MARKER } from "../../src/search/render.js";
import { DEFAULT_IGNORES } from "../../src/vfs/ignore-rules.js";
import { type DaemonClient, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { check, runs } from "./runs.js";
import { treeOf, withIgnoreFiles, writeTree } from "./trees.js";

/** Cases per variant in `npm test`. */
const RUNS = 15;

const WORDS = ["needle", "Needle", "NEEDLE", "needles", "neeedle", "hay", "stack", "é", "日本", "\t", "x"];
const PATTERNS = [
  "needle",
  "Needle",
  "NEEDLE",
  "ne+dle",
  "^needle",
  "needle$",
  "\\bneedle\\b",
  "e",
  "é",
  "日本",
  "n.e",
  "needle|hay",
  "(?i)hAy",
  "a b",
  "xab",
  "ba$",
];

const shortLine = fc.array(fc.constantFrom(...WORDS), { maxLength: 6 }).map((w) => w.join(" "));
/** Past rg's 256-column preview, the daemon's 500-character window and its 2,000-byte whole-decode limit. */
const longLine = fc.tuple(fc.integer({ min: 150, max: 3000 }), fc.nat(), fc.constantFrom(...WORDS)).map(([pairs, at, word]) => {
  const base = "ab".repeat(pairs);
  const cut = at % (base.length + 1);
  return base.slice(0, cut) + word + base.slice(cut);
});
const line = fc.oneof({ weight: 8, arbitrary: shortLine }, { weight: 1, arbitrary: longLine }, { weight: 1, arbitrary: fc.constant("") });

type Oddity = "none" | "nul-early" | "nul-after-8k" | "nul-after-64k" | "latin1" | "lone-cr" | "bom";
const ODDITIES: Oddity[] = ["none", "none", "none", "none", "nul-early", "nul-after-8k", "nul-after-64k", "latin1", "lone-cr", "bom"];

const content: fc.Arbitrary<Buffer> = fc
  .record({ lines: fc.array(line, { maxLength: 10 }), eol: fc.constantFrom("\n", "\r\n", "mixed"), final: fc.boolean(), oddity: fc.constantFrom(...ODDITIES) })
  .map(({ lines, eol, final, oddity }) => {
    const padTo = (bytes: number) => Array.from({ length: Math.ceil(bytes / 10) }, () => "012345678"); // matches no pattern
    const all = [...lines];
    if (oddity === "nul-early") all.unshift("bin\0ary needle");
    if (oddity === "nul-after-8k") all.push(...padTo(9000), "late\0nul needle");
    if (oddity === "nul-after-64k") all.push(...padTo(70_000), "late\0nul needle");
    if (oddity === "lone-cr") all.push("nee\rdle needle\r");
    const eolOf = (i: number) => (eol === "mixed" ? (i % 2 ? "\r\n" : "\n") : eol);
    const text = all.map((l, i) => l + (i < all.length - 1 || final ? eolOf(i) : "")).join("");
    const parts = [Buffer.from(text)];
    if (oddity === "bom") parts.unshift(Buffer.from([0xef, 0xbb, 0xbf]));
    if (oddity === "latin1") parts.push(Buffer.from("caf\xe9 needle\n", "latin1"));
    return Buffer.concat(parts);
  });

const tree = withIgnoreFiles(treeOf(content));

const request = fc.record({
  pattern: fc.constantFrom(...PATTERNS),
  fixed_strings: fc.boolean(),
  case_sensitive: fc.constantFrom(undefined, true, false),
  context: fc.constantFrom(0, 0, 1, 2),
  hidden: fc.boolean(),
  glob: fc.option(fc.constantFrom(["*.log"], ["*.ts", "*.md"], ["!*.md"], ["a*"], ["**/b/**"], ["{a,b}"], [".*"], ["!a", "a*"]), { nil: undefined }),
});
type Request = typeof request extends fc.Arbitrary<infer R> ? R : never;

interface RgLine {
  match: boolean;
  bytes: Buffer;
  submatches: { start: number; end: number }[];
}

interface SearchLine {
  line: number;
  tag: string | null;
  text: string;
  match: boolean;
  not_utf8?: true;
}

/** rg's --json records (text or base64 bytes) as line maps per path; `ignores`: what decides what is ignored. */
function rgJson(cwd: string, rel: string, r: Request, ignores: string[]): Map<string, Map<number, RgLine>> {
  const args = ["--json", "--no-config", ...ignores];
  if (r.case_sensitive === undefined) args.push("--smart-case");
  else args.push(r.case_sensitive ? "--case-sensitive" : "--ignore-case");
  if (r.fixed_strings) args.push("--fixed-strings");
  if (r.hidden) args.push("--hidden");
  if (r.context) args.push(`--context=${r.context}`);
  for (const g of r.glob ?? []) args.push(`--glob=${g}`);
  args.push("-e", r.pattern, "--", rel);
  const run = spawnSync(rgPath, args, { cwd, maxBuffer: 1 << 28 });
  if (run.status !== 0 && run.status !== 1) throw new Error(`rg failed: ${run.stderr}`);
  const data = (d: { text?: string; bytes?: string }) => (d.text !== undefined ? Buffer.from(d.text) : Buffer.from(d.bytes ?? "", "base64"));
  const files = new Map<string, Map<number, RgLine>>();
  // rg's -g overrides its ignore rules; search keeps ignored files out (docs/tools/search.md): only what rg would
  // search without the globs counts
  const searchable =
    r.glob &&
    new Set(
      spawnSync(rgPath, ["--files", ...args.filter((a) => a.startsWith("--no-") || a.startsWith("--ignore-file") || a === "--hidden"), "--", rel], { cwd })
        .stdout.toString()
        .split("\n"),
    );
  for (const raw of run.stdout.toString().split("\n")) {
    if (!raw) continue;
    const msg = JSON.parse(raw);
    if (msg.type !== "match" && msg.type !== "context") continue;
    const p = data(msg.data.path).toString();
    if (searchable && !searchable.has(p)) continue;
    if (!files.has(p)) files.set(p, new Map());
    files.get(p)!.set(msg.data.line_number, { match: msg.type === "match", bytes: data(msg.data.lines), submatches: msg.data.submatches });
  }
  return files;
}

/** A line's content as SPEC 4 has it: without its terminator (`\n`, and a `\r` before it). */
function contentOf(bytes: Buffer): Buffer {
  if (bytes[bytes.length - 1] !== 10) return bytes;
  return bytes.subarray(0, bytes[bytes.length - 2] === 13 ? -2 : -1);
}

/** Why a shown line is wrong, or undefined: its tag, its text, and for a cut match line, where its window is. */
function lineProblem(ours: SearchLine, rg: RgLine): string | undefined {
  const content = contentOf(rg.bytes);
  if (ours.tag !== tagOfBytes(content)) return `tag ${ours.tag}, want ${tagOfBytes(content)}`;
  const decoded = content.toString("utf8");
  const marker = ours.not_utf8 ? NOT_UTF8_MARKER : "";
  if (decoded.length <= MAX_SEARCH_LINE_CHARS) return ours.text === decoded + marker ? undefined : `text ${JSON.stringify(ours.text)}`;
  const cut = ` [line cut: ${content.length} bytes]${marker}`;
  if (!ours.text.endsWith(cut)) return `a long line without its cut marker: ${JSON.stringify(ours.text.slice(-80))}`;
  const window = ours.text.slice(0, -cut.length).replace(/^… /, "").replace(/…$/, "");
  if (!decoded.includes(window)) return "a window that is not part of the line";
  const first = rg.submatches[0];
  if (!rg.match || !first || ours.not_utf8) return undefined;
  const from = content.subarray(0, first.start).toString("utf8").length;
  const to = content.subarray(0, first.end).toString("utf8").length;
  for (let at = decoded.indexOf(window); at >= 0; at = decoded.indexOf(window, at + 1)) if (at <= from && to <= at + window.length) return undefined;
  return `the first match (characters ${from}-${to}) is outside the shown window`;
}

/**
 * What a user expects rg to skip: in a repository git's rules (rg's own .ignore files aside: docs/tools/search.md);
 * outside one the VFS's defaults and the .gitignore files inside the root.
 */
function ignoresFor(git: boolean, defaultsFile: string): string[] {
  return git ? ["--no-ignore-dot"] : ["--no-ignore-dot", "--no-require-git", "--no-ignore-parent", "--no-ignore-global", `--ignore-file=${defaultsFile}`];
}

describe.each([true, false])("search against rg --json on random trees (git: %s)", (git) => {
  const ws = tmpWorkspace({ git });
  const defaults = tmpWorkspace({ files: { ignores: `${DEFAULT_IGNORES.join("\n")}\n` } });
  const ignores = ignoresFor(git, path.join(defaults.dir, "ignores"));
  let d: DaemonClient;
  let run = 0;
  beforeAll(async () => {
    await initHash();
    d = await startDaemon(ws.dir);
  });
  afterAll(async () => {
    await d?.close();
    ws.cleanup();
    defaults.cleanup();
  });

  it(
    "finds the files, lines and matches rg finds, with real tags and hashes",
    async () => {
      await check(
        fc.asyncProperty(tree, request, async (files, r) => {
          const rel = `run${run++}`;
          const dir = path.join(ws.dir, rel);
          writeTree(dir, files);
          try {
            const want = rgJson(ws.dir, rel, r, ignores);
            const got = await d.ok("search", { ...r, path: rel, max_results: 2000 });
            const problems: string[] = [];
            expect(got.matches.map((f: { path: string }) => f.path)).toEqual([...want.keys()].sort());
            for (const f of got.matches as { path: string; hash: string; lines: SearchLine[] }[]) {
              const lines = want.get(f.path)!;
              expect(
                f.lines.map((l) => [l.line, l.match]),
                f.path,
              ).toEqual([...lines].sort(([a], [b]) => a - b).map(([n, l]) => [n, l.match]));
              if (f.hash !== fileHash(readFileSync(path.join(ws.dir, f.path)))) problems.push(`${f.path}: hash ${f.hash}`);
              for (const l of f.lines) {
                const problem = lineProblem(l, lines.get(l.line)!);
                if (problem) problems.push(`${f.path}:${l.line}: ${problem}`);
              }
            }
            expect(problems).toEqual([]);
            expect(got.total).toBe([...want.values()].reduce((n, lines) => n + [...lines.values()].filter((l) => l.match).length, 0));
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        }),
        RUNS,
      );
    },
    runs(RUNS) * 3_000,
  );
});
