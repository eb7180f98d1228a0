import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { countTokens } from "gpt-tokenizer";
import { initHash, tagOf } from "../src/core/hash.js";
import { splitText } from "../src/core/text.js";
import { BenchDaemon, StdioJsonRpc, median, percentile, removeTree } from "./lib.js";

/**
 * The edit-cycle benchmark (issue 10, `npm run bench -- agent`): real edits replayed as agent cycles, counting what
 * goes over the wire. The edits are the hunks of this repository's own history: for every commit, every text file it
 * modified is one task ("make the file what the commit made it"), old version -> new version. Each task is done three
 * ways, all checked to produce exactly the new version:
 *   tags        tool-layer: one file_read window covering the hunks, then one file_write batch by line tags
 *               (through the real daemon);
 *   edit_file   the MCP filesystem server: the same window read with read_text_file (head/tail), then one edit_file call
 *               with {oldText, newText} per hunk, each oldText grown with context lines until unique (the real server);
 *   str_replace Claude Code's Edit: one call per hunk with old_string/new_string grown until unique, after a Read of the
 *               same window in `cat -n` form; its answer is modelled as Claude Code prints it (a `cat -n` snippet);
 *   rewrite     the whole file read, then written whole.
 * Output is what the model writes (the calls' arguments as JSON), input what it reads (the tools' answers).
 * Tokens are counted with gpt-tokenizer (o200k_base, GPT-4o's encoding).
 */

const REPO = realpathSync(fileURLToPath(new URL("../..", import.meta.url)));
const MCP_FILESYSTEM = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url));
/** Lines of context read around the hunks, as a model would look before editing. */
const READ_CONTEXT = 5;
/** A window larger than this is read in pieces (file_read's own limit). */
const MAX_WINDOW = 2000;
/** Files above this many lines are left out: a whole-file rewrite of them is not what anyone would do. */
const MAX_FILE_LINES = 3000;
/** At most this many tasks (the newest commits first); enough for stable medians, short enough to run in a minute. */
const MAX_TASKS = 400;

interface Hunk {
  /** 1-based first old line; for an insertion, the old line it goes after (0: the top). */
  oldStart: number;
  oldCount: number;
  newLines: string[];
}

interface Task {
  commit: string;
  path: string;
  old: string;
  new: string;
  hunks: Hunk[];
}

interface Cost {
  outBytes: number;
  outTokens: number;
  inBytes: number;
  inTokens: number;
  calls: number;
  failed: boolean;
}

const git = (...args: string[]) => execFileSync("git", args, { cwd: REPO, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });

function tasks(): Task[] {
  const out: Task[] = [];
  for (const commit of git("log", "--no-merges", "--format=%H").split("\n").filter(Boolean)) {
    const parents = git("rev-list", "--parents", "-n", "1", commit).trim().split(" ");
    if (parents.length < 2) continue;
    const diff = git("diff", "--no-renames", "-U0", "--no-color", "--diff-filter=M", `${commit}^`, commit);
    for (const file of diff.split(/^diff --git /m).slice(1)) {
      const rel = /^a\/(\S+) b\//.exec(file)?.[1];
      if (!rel || /Binary files/.test(file) || rel === "package-lock.json") continue;
      const old = git("show", `${commit}^:${rel}`);
      const now = git("show", `${commit}:${rel}`);
      if (old.includes("\0") || splitText(old).lines.length > MAX_FILE_LINES) continue;
      const hunks: Hunk[] = [];
      for (const m of file.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@.*\n((?:[-+\\].*\n?)*)/gm)) {
        const body = m[5]
          .split("\n")
          .filter((l) => l.startsWith("+"))
          .map((l) => l.slice(1));
        hunks.push({ oldStart: Number(m[1]), oldCount: m[2] === undefined ? 1 : Number(m[2]), newLines: body });
      }
      if (hunks.length) out.push({ commit, path: rel, old, new: now, hunks });
      if (out.length >= MAX_TASKS) return out;
    }
  }
  return out;
}

const cost = (out: unknown[], input: string[], failed = false): Cost => {
  const outText = out.map((o) => JSON.stringify(o));
  return {
    outBytes: outText.reduce((n, s) => n + Buffer.byteLength(s), 0),
    outTokens: outText.reduce((n, s) => n + countTokens(s), 0),
    inBytes: input.reduce((n, s) => n + Buffer.byteLength(s), 0),
    inTokens: input.reduce((n, s) => n + countTokens(s), 0),
    calls: out.length,
    failed,
  };
};

/** The windows a model reads before editing: the hunks' span with context, in pieces of at most MAX_WINDOW lines. */
function windows(t: Task, total: number): [number, number][] {
  const from = Math.max(1, Math.min(...t.hunks.map((h) => h.oldStart)) - READ_CONTEXT);
  const to = Math.min(total, Math.max(...t.hunks.map((h) => h.oldStart + Math.max(h.oldCount, 1) - 1)) + READ_CONTEXT);
  const out: [number, number][] = [];
  for (let a = from; a <= Math.max(to, from); a += MAX_WINDOW) out.push([a, Math.min(Math.max(to, from), a + MAX_WINDOW - 1)]);
  return out;
}

const indentOf = (s: string) => /^[ \t]*/.exec(s)![0];

/** file_write edits for a task's hunks, against the old version: unique tags bare, others as N:TAG. */
function tagEdits(t: Task, hunks = t.hunks, numbered?: (n: number) => number): Record<string, unknown>[] {
  const lines = splitText(t.old).lines;
  const tags = lines.map(tagOf);
  const count = new Map<string, number>();
  for (const tag of tags) count.set(tag, (count.get(tag) ?? 0) + 1);
  // `numbered`: every anchor as N:TAG, N the line's number now (the old one moved by the writes so far).
  const anchor = numbered
    ? (n: number) => `${numbered(n)}:${tags[n - 1]}`
    : (n: number) => (count.get(tags[n - 1]) === 1 ? tags[n - 1] : `${n}:${tags[n - 1]}`);
  return hunks.map((h) => {
    const anchorLine = h.oldCount ? h.oldStart : Math.max(h.oldStart, 1);
    const edit: Record<string, unknown> = {};
    if (h.oldCount === 0) {
      edit.type = "insert";
      if (h.oldStart === 0) edit.endline = anchor(1);
      else edit.startline = anchor(h.oldStart);
    } else if (h.newLines.length === 0) {
      edit.type = "delete";
      edit.startline = anchor(h.oldStart);
      if (h.oldCount > 1) edit.endline = anchor(h.oldStart + h.oldCount - 1);
      return edit;
    } else {
      edit.type = "replace";
      edit.startline = anchor(h.oldStart);
      if (h.oldCount > 1) edit.endline = anchor(h.oldStart + h.oldCount - 1);
    }
    // Auto-indent (SPEC 5) lets the model leave out the anchor line's indentation when every new line has it.
    const base = indentOf(lines[(h.oldStart === 0 ? 1 : anchorLine) - 1] ?? "");
    const nonEmpty = h.newLines.filter((l) => l.trim());
    let content = h.newLines;
    // It applies when the first non-empty line has no indentation left: so only when that line's indent is the anchor's.
    if (base && nonEmpty.length && indentOf(nonEmpty[0]) === base && nonEmpty.every((l) => l.startsWith(base)))
      content = h.newLines.map((l) => (l.trim() ? l.slice(base.length) : l));
    else if (base && nonEmpty.length && !indentOf(nonEmpty[0])) edit.auto_indent = false;
    // One trailing \n of content is ignored (SPEC 5), so a block that ends with an empty line needs one more.
    edit.content = content.join("\n") + (content[content.length - 1] === "" ? "\n" : "");
    return edit;
  });
}

/** Hunks whose old string was not unique as it stood and had to take context lines (str_replace's ambiguity). */
const ambiguity = { hunks: 0, grown: 0 };

/**
 * old/new strings for one hunk of `current` (0-based line `at`, `count` old lines), as whole lines with their line
 * breaks (so a deletion takes its line break along, as a careful model's old_string does), grown by a line on each side
 * until `old` is unique.
 */
function replacement(current: string, at: number, count: number, newLines: string[]): { old: string; neu: string } | null {
  ambiguity.hunks++;
  const starts = lineStarts(current);
  const lines = starts.length - 1;
  const added = newLines.map((l) => `${l}\n`).join("");
  for (let grow = 0; grow <= lines; grow++) {
    const from = Math.max(0, at - grow);
    const to = Math.min(lines, at + count + grow);
    if (to === from) continue;
    const old = current.slice(starts[from], starts[to]);
    if (!old.trim()) continue;
    const first = current.indexOf(old);
    if (first !== -1 && current.indexOf(old, first + 1) === -1) {
      if (grow > 0 || count === 0) ambiguity.grown++;
      let neu = current.slice(starts[from], starts[at]) + added + current.slice(starts[at + count], starts[to]);
      // The file's last line without a line break keeps having none.
      if (starts[to] === current.length && !current.endsWith("\n") && neu.endsWith("\n")) neu = neu.slice(0, -1);
      return { old, neu };
    }
  }
  return null;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) if (i + 1 < text.length) starts.push(i + 1);
  starts.push(text.length);
  return starts;
}

const apply = (text: string, r: { old: string; neu: string }) => text.replace(r.old, () => r.neu);

/** Claude Code's Read output for lines [from, to]: `cat -n` style, a six-wide number and a tab. */
const catN = (lines: string[], from: number, to: number) =>
  lines
    .slice(from - 1, to)
    .map((l, i) => `${String(from + i).padStart(6)}\t${l}`)
    .join("\n");

function strReplace(t: Task, path: string, file = t.old): Cost {
  const input: string[] = [];
  const out: unknown[] = [];
  let lines = splitText(file).lines;
  for (const [a, b] of windows(t, lines.length)) {
    out.push({ file_path: path, offset: a, limit: b - a + 1 });
    input.push(catN(lines, a, b));
  }
  // Bottom-up, so each hunk's old line numbers still hold when it is applied.
  let text = file;
  for (const h of [...t.hunks].reverse()) {
    const at = h.oldCount ? h.oldStart - 1 : h.oldStart;
    const r = replacement(text, at, h.oldCount, h.newLines);
    if (!r) return cost(out, input, true);
    out.push({ file_path: path, old_string: r.old, new_string: r.neu });
    text = apply(text, r);
    lines = splitText(text).lines;
    const shownFrom = Math.max(1, at + 1 - 4);
    input.push(
      `The file ${path} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${catN(lines, shownFrom, Math.min(lines.length, at + h.newLines.length + 4))}`,
    );
  }
  return cost(out, input, text !== t.new);
}

function rewrite(t: Task, path: string): Cost {
  return cost(
    [{ file_path: path }, { file_path: path, content: t.new }],
    [catN(splitText(t.old).lines, 1, splitText(t.old).lines.length), `File created successfully at: ${path}`],
  );
}

export default async function main(): Promise<void> {
  await initHash();
  const all = tasks();
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-bench-agent-")));
  const daemon = new BenchDaemon(dir);
  const mcp = new StdioJsonRpc(process.execPath, [MCP_FILESYSTEM, dir]);
  const results: Result[] = [];
  try {
    await Promise.all([daemon.ready, mcp.init()]);
    for (const [i, t] of all.entries()) {
      const rel = `t${i}/${path.basename(t.path)}`;
      const abs = path.join(dir, rel);
      mkdirSync(path.dirname(abs), { recursive: true });

      // tags: a window read, one batch by tags, through the daemon.
      const { input: tagIn, out: tagOut, hash } = await readWindows(daemon, t, rel, abs);
      const write = { path: rel, hash, edits: tagEdits(t) };
      const w = await daemon.call("file_write", write);
      tagOut.push(write);
      tagIn.push(w.success ? w.result.text : JSON.stringify(w.result));
      const tags = cost(tagOut, tagIn, !w.success || readFileSync(abs, "utf8") !== t.new);
      const stepwise = t.hunks.length > 1 ? await hunkByHunk(daemon, t, rel, abs, true) : undefined;
      const stale = t.hunks.length > 1 ? await hunkByHunk(daemon, t, rel, abs, false) : undefined;
      if (tags.failed)
        console.log(`tags failed on ${t.commit.slice(0, 8)} ${t.path}: ${w.success ? "wrong result" : `${w.result.code}: ${w.result.message}`.slice(0, 200)}`);

      // edit_file: the MCP filesystem server, for real.
      writeFileSync(abs, t.old);
      const fsIn: string[] = [];
      const fsOut: unknown[] = [];
      const lines = splitText(t.old).lines;
      for (const [a, b] of windows(t, lines.length)) {
        // read_text_file takes head or tail, not a range: the shorter of the two that covers the window.
        const args = b <= lines.length - a + 1 ? { path: abs, head: b } : { path: abs, tail: lines.length - a + 1 };
        const r = await mcp.request("tools/call", { name: "read_text_file", arguments: args });
        fsOut.push(args);
        fsIn.push(r.result?.content?.[0]?.text ?? "");
      }
      let current = t.old;
      const edits: { oldText: string; newText: string }[] = [];
      let failed = false;
      for (const h of [...t.hunks].reverse()) {
        const at = h.oldCount ? h.oldStart - 1 : h.oldStart;
        const r = replacement(current, at, h.oldCount, h.newLines);
        if (!r) {
          failed = true;
          break;
        }
        edits.push({ oldText: r.old, newText: r.neu });
        current = apply(current, r);
      }
      if (!failed) {
        const args = { path: abs, edits };
        const r = await mcp.request("tools/call", { name: "edit_file", arguments: args });
        fsOut.push(args);
        fsIn.push(r.result?.content?.[0]?.text ?? JSON.stringify(r.error ?? r.result));
        failed = !!(r.error || r.result?.isError) || readFileSync(abs, "utf8") !== t.new;
      }
      const editFile = cost(fsOut, fsIn, failed);

      results.push({ tags, editFile, strReplace: strReplace(t, abs), rewrite: rewrite(t, abs), hunks: t.hunks.length, stepwise, stale });
    }
  } finally {
    await Promise.all([daemon.close(), mcp.close()]);
    removeTree(dir);
  }
  print(results, all.length);
}

interface Result {
  tags: Cost;
  editFile: Cost;
  strReplace: Cost;
  rewrite: Cost;
  hunks: number;
  /** Tasks of several hunks done one write per hunk, top down, from one read: anchors moved by each answer's shifts. */
  stepwise?: Cost;
  /** The same, old line numbers reused as they were (what a model without shifts would send). */
  stale?: Cost;
}

/** The task's old version written to `abs`, then its windows read through the daemon: the calls, answers and hash. */
async function readWindows(daemon: BenchDaemon, t: Task, rel: string, abs: string): Promise<{ input: string[]; out: unknown[]; hash: string }> {
  writeFileSync(abs, t.old);
  const input: string[] = [];
  const out: unknown[] = [];
  let hash = "";
  for (const [a, b] of windows(t, splitText(t.old).lines.length)) {
    const params = { path: rel, offset: a, limit: b - a + 1 };
    const r = await daemon.call("file_read", params);
    out.push(params);
    input.push(r.result.text);
    hash = r.result.hash;
  }
  return { input, out, hash };
}

/**
 * A task of several hunks as a model that edits as it goes: one read, then one file_write per hunk, top down, each
 * anchored `N:TAG` on the line numbers of the one read, moved by the `shifts` of the answers so far (withShifts), or
 * not (what a model would do without them: a stale anchor is TAG_MISMATCH, and it would have to read again).
 */
async function hunkByHunk(daemon: BenchDaemon, t: Task, rel: string, abs: string, withShifts: boolean): Promise<Cost> {
  const { input, out, hash: read } = await readWindows(daemon, t, rel, abs);
  let hash = read;
  let moves: { from: number; to: number; by: number }[][] = [];
  const now = (n: number) => moves.reduce((line, shifts) => line + (shifts.find((s) => line >= s.from && line <= s.to)?.by ?? 0), n);
  let failed = false;
  for (const h of t.hunks) {
    const write = { path: rel, hash, edits: tagEdits(t, [h], withShifts ? now : (n) => n) };
    const w = await daemon.call("file_write", write);
    out.push(write);
    input.push(w.success ? w.result.text : JSON.stringify(w.result));
    if (!w.success) {
      if (withShifts && process.env.BENCH_AGENT_DEBUG)
        console.log("stepwise", t.commit.slice(0, 8), t.path, JSON.stringify(write.edits).slice(0, 200), w.result.code, w.result.message.slice(0, 200));
      failed = true;
      break;
    }
    hash = w.result.hash;
    moves = [...moves, w.result.shifts ?? []];
  }
  const wrong = !failed && readFileSync(abs, "utf8") !== t.new;
  if (wrong && withShifts && process.env.BENCH_AGENT_DEBUG)
    console.log("stepwise wrong", t.commit.slice(0, 8), t.path, JSON.stringify(t.hunks.map((h) => [h.oldStart, h.oldCount, h.newLines.length])));
  return cost(out, input, failed || wrong);
}

function print(results: Result[], total: number): void {
  const ways = ["tags", "editFile", "strReplace", "rewrite"] as const;
  const names = { tags: "tool-layer tags", editFile: "MCP edit_file", strReplace: "str_replace (Edit)", rewrite: "whole-file rewrite" };
  const ok = results.filter((r) => ways.every((w) => !r[w].failed));
  console.log(
    `${total} edit tasks (every text file a commit of this repository modified: old -> new version), ${ok.length} done by every way; hunks per task: median ${median(results.map((r) => r.hunks))}, p90 ${percentile(
      results.map((r) => r.hunks),
      90,
    )}`,
  );
  console.log(`failures: ${ways.map((w) => `${names[w]} ${results.filter((r) => r[w].failed).length}`).join(", ")}`);
  const sum = (w: (typeof ways)[number], k: keyof Cost) => ok.reduce((n, r) => n + (r[w][k] as number), 0);
  console.log(
    `${"".padEnd(22)}${"output tok (median)".padStart(21)}${"input tok (median)".padStart(20)}${"calls (median)".padStart(16)}${"output tok (total)".padStart(20)}${"input tok (total)".padStart(19)}`,
  );
  for (const w of ways) {
    console.log(
      `${names[w].padEnd(22)}${String(median(ok.map((r) => r[w].outTokens))).padStart(21)}${String(median(ok.map((r) => r[w].inTokens))).padStart(20)}${String(median(ok.map((r) => r[w].calls))).padStart(16)}${String(sum(w, "outTokens")).padStart(20)}${String(sum(w, "inTokens")).padStart(19)}`,
    );
  }
  for (const w of ["editFile", "strReplace", "rewrite"] as const) {
    const ratios = ok.map((r) => r.tags.outTokens / r[w].outTokens);
    const inRatios = ok.map((r) => r.tags.inTokens / r[w].inTokens);
    console.log(
      `tags vs ${names[w]}: output tokens per task, median ratio ${median(ratios).toFixed(2)}x (total ${(sum("tags", "outTokens") / sum(w, "outTokens")).toFixed(2)}x); input ${median(inRatios).toFixed(2)}x (total ${(sum("tags", "inTokens") / sum(w, "inTokens")).toFixed(2)}x); bytes out total ${(sum("tags", "outBytes") / sum(w, "outBytes")).toFixed(2)}x`,
    );
  }
  const worse = ok.filter((r) => r.tags.outTokens > r.strReplace.outTokens).length;
  const worseIn = ok.filter((r) => r.tags.inTokens > r.strReplace.inTokens).length;
  console.log(`tasks where tags cost more than str_replace: output tokens ${worse} of ${ok.length}, input tokens ${worseIn} of ${ok.length}`);
  const multi = results.filter((r) => r.stepwise);
  const stepOk = multi.filter((r) => !r.stepwise!.failed);
  console.log(
    `${multi.length} tasks of several hunks, done one write per hunk from one read: with shifts ${stepOk.length} done, without them (old numbers reused) ${multi.filter((r) => !r.stale!.failed).length} done (the rest meet a stale anchor and need a re-read)`,
  );
  if (stepOk.length)
    console.log(
      `  with shifts: output tokens median ${median(stepOk.map((r) => r.stepwise!.outTokens))} (vs one batch ${median(stepOk.map((r) => r.tags.outTokens))}, str_replace ${median(stepOk.map((r) => r.strReplace.outTokens))}); calls median ${median(stepOk.map((r) => r.stepwise!.calls))}`,
    );
  console.log(
    `old strings that had to grow to be unique (or an insertion, which always needs context): ${ambiguity.grown} of ${ambiguity.hunks} (both str_replace ways); tags needed none: an anchor is unique or N:TAG`,
  );
}
