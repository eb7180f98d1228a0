import { type Stats, closeSync, fstatSync, lstatSync, read, readSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { z } from "zod";
import { BINARY_SNIFF_BYTES, plural } from "../core/text.js";
import { ToolError } from "../errors.js";
import { openReadConfined } from "../fs/confined.js";
import { fileError } from "../fs/read-text.js";
import { defineTool } from "../dispatch/tool.js";
import type { LineCount, SearchCaches } from "../search/caches.js";

type LineCounts = SearchCaches["lineCounts"];

const readAsync = promisify(read);

/** Folder levels shown when no depth is given: the top of a project at a glance. */
export const DEFAULT_DEPTH = 2;
export const MAX_DEPTH = 20;
/** Lines of a listing at most (about 15,000 characters): a tree bigger than this is better narrowed by path or depth. */
export const MAX_ENTRIES = 400;
/** Bytes read per call to count lines: past this, files show their size only (a listing must stay cheap). */
const LINE_COUNT_BUDGET_BYTES = 16 * 1024 * 1024;
/** A file up to this size is read synchronously (microseconds); larger ones off the event loop. */
const SYNC_READ_BYTES = 256 * 1024;

const DESCRIPTION = `Lists a folder as a compact tree: subfolders with how many files they hold, files with size and line count.
Ignored paths (.gitignore, node_modules, build output) and .git are left out, as search and find_file leave them out.
- path: the folder (default: the workspace root).
- depth: how many folder levels to expand (default ${DEFAULT_DEPTH}); deeper folders are shown with their file counts only.
At most ${MAX_ENTRIES} entries; a note says what was left out (narrow it with path or depth).`;

interface Dir {
  dirs: Map<string, Dir>;
  files: string[];
  /** Files at any depth below. */
  count: number;
}

const newDir = (): Dir => ({ dirs: new Map(), files: [], count: 0 });

export const listDirTool = defineTool({
  id: "list_dir",
  description: DESCRIPTION,
  params: {
    path: z.string().optional().describe("Folder to list, relative to the workspace root (or absolute inside it). Default: the root."),
    depth: z.number().int().min(1).max(MAX_DEPTH).optional().describe(`Folder levels to expand, 1 to ${MAX_DEPTH}. Default ${DEFAULT_DEPTH}.`),
  },
  mutating: false,
  async run(params, { ws, signal }) {
    const target = await ws.paths.resolve(params.path ?? "");
    const shown = target.rel || ".";
    let st: Stats;
    try {
      st = lstatSync(target.real);
    } catch (e) {
      throw fileError(e, target, "read");
    }
    if (!st.isDirectory()) throw new ToolError("NOT_A_FILE", `${shown} is not a folder; list_dir lists folders (file_read reads files).`);
    const depth = params.depth ?? DEFAULT_DEPTH;
    const base = target.realRel;
    const prefix = base ? `${base}/` : "";
    const tree = newDir();
    for (const p of ws.fileIndex?.paths() ?? []) {
      if (!p.startsWith(prefix)) continue;
      const parts = p.slice(prefix.length).split("/");
      let node = tree;
      node.count++;
      for (let i = 0; i < parts.length - 1; i++) {
        if (i >= depth) break; // deeper folders are counted in the last one shown
        let child = node.dirs.get(parts[i]);
        if (!child) node.dirs.set(parts[i], (child = newDir()));
        node = child;
        node.count++;
      }
      // A file shows when its folder is expanded: folders at levels below `depth` are.
      if (parts.length - 1 < depth) node.files.push(parts[parts.length - 1]);
    }

    const lines: string[] = [];
    const entries: Record<string, unknown>[] = [];
    let left = 0;
    let budget = LINE_COUNT_BUDGET_BYTES;
    const walk = async (node: Dir, rel: string, level: number) => {
      for (const name of [...node.dirs.keys()].sort()) {
        const child = node.dirs.get(name)!;
        const childRel = rel ? `${rel}/${name}` : name;
        if (lines.length >= MAX_ENTRIES) {
          left += 1 + child.count;
          continue;
        }
        const expanded = level + 1 < depth;
        lines.push(`${"  ".repeat(level)}${name}/ (${plural(child.count, "file")}${expanded ? "" : ", not expanded"})`);
        entries.push({ path: childRel, kind: "folder", files: child.count });
        if (expanded) await walk(child, childRel, level + 1);
      }
      for (const name of [...node.files].sort()) {
        const fileRel = rel ? `${rel}/${name}` : name;
        if (lines.length >= MAX_ENTRIES) {
          left++;
          continue;
        }
        signal.throwIfAborted();
        const info = await describeFile(ws.root, prefix + fileRel, budget, ws.search.lineCounts);
        budget -= info.read;
        lines.push(`${"  ".repeat(level)}${name} · ${info.text}`);
        entries.push({
          path: fileRel,
          kind: info.kind,
          ...(info.size !== undefined ? { size: info.size } : {}),
          ...(typeof info.lines === "number" ? { lines: info.lines } : {}),
        });
      }
    };
    await walk(tree, "", 0);
    const head = `dir ${shown} · ${plural(tree.count, "file")} (ignored paths left out) · depth ${depth}`;
    const notes: string[] = [];
    if (!tree.count) notes.push(`No watched files under ${shown}: it is empty, or ignored (.gitignore, node_modules, build output).`);
    if (left)
      notes.push(`… ${plural(left, "more entry", "more entries")} not shown (at most ${MAX_ENTRIES}); list a subfolder with path, or use a smaller depth.`);
    return {
      path: shown,
      depth,
      total_files: tree.count,
      entries,
      ...(left ? { truncated: true, left_out: left } : {}),
      text: [head, ...lines, ...notes].join("\n"),
    };
  },
});

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Size and line count of one listed file, read through a confined descriptor (never through a swapped folder). */
async function describeFile(
  root: string,
  rel: string,
  budget: number,
  counts: LineCounts,
): Promise<{ text: string; kind: string; size?: number; lines?: LineCount["lines"]; read: number }> {
  const real = path.join(root, rel);
  let fd: number;
  try {
    const link = lstatSync(real);
    if (link.isSymbolicLink()) return { text: "symlink", kind: "symlink", read: 0 };
    fd = openReadConfined({ root, rel, real });
  } catch {
    return { text: "gone or unreadable", kind: "file", read: 0 };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { text: "not a regular file", kind: "other", read: 0 };
    const cached = counts.get(real);
    if (cached && cached.size === st.size && cached.mtimeMs === st.mtimeMs) return { ...render(cached), read: 0 };
    if (st.size > budget) return { text: formatSize(st.size), kind: "file", size: st.size, read: 0 };
    const bytes = Buffer.allocUnsafe(st.size);
    let n = 0;
    while (n < st.size) {
      const got = st.size <= SYNC_READ_BYTES ? readSync(fd, bytes, n, st.size - n, n) : (await readAsync(fd, bytes, n, st.size - n, n)).bytesRead;
      if (got === 0) break;
      n += got;
    }
    const counted: LineCount = { size: st.size, mtimeMs: st.mtimeMs, lines: countLines(bytes.subarray(0, n)) };
    counts.set(real, counted);
    return { ...render(counted), read: n };
  } finally {
    closeSync(fd);
  }
}

function render(c: LineCount): { text: string; kind: string; size: number; lines: LineCount["lines"] } {
  const lines = c.lines === "binary" ? "binary" : c.lines === null ? "" : plural(c.lines, "line");
  return { text: [formatSize(c.size), lines].filter(Boolean).join(" · "), kind: "file", size: c.size, lines: c.lines };
}

/** SPEC 4's line count: terminators, plus a last line without one; a NUL in the first 8 KiB is a binary file. */
function countLines(bytes: Buffer): number | "binary" {
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) !== -1) return "binary";
  let n = 0;
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) n++;
  return bytes.length && bytes[bytes.length - 1] !== 10 ? n + 1 : n;
}
