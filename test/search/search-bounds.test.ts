import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash, tagOfBytes } from "../../src/core/hash.js";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

/**
 * Peak resident memory the daemon may reach in these searches. It starts at about 70 MB and reached about 90 MB here;
 * before rg's output was read with bounded lines it went past 600 MB and died on the 12 MB line.
 */
const PEAK_RSS_BOUND_MB = 300;

/** The daemon's peak RSS (VmHWM), from /proc: what the host saw, not what the heap says. */
function peakRssMb(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

/** One line of JSON, as a bundler or an API dump writes it. */
function oneLineJson(bytes: number): string {
  const items: string[] = [];
  let size = 2;
  for (let i = 0; size < bytes; i++) {
    const item = `{"id":${i},"name":"item ${i}","tags":["a","b"],"ok":true}`;
    items.push(item);
    size += item.length + 1;
  }
  return `[${items.join(",")}]`;
}

/** Searches over huge lines, through the real daemon, in a workspace that is not a git repository. */
describe("search over huge lines, outside git", () => {
  const nine = "a".repeat(9_000_000);
  const ws = tmpWorkspace({
    files: {
      "huge/a.txt": "a".repeat(12_000_000),
      "huge/api.json": oneLineJson(17_000_000),
      "fits/nine.txt": nine,
      "src/app.js": "const needle = 1;\n",
      "node_modules/pkg/index.js": "const needle = 2;\n",
      "dist/app.js": "const needle = 3;\n",
      "src/build/out.js": "const needle = 4;\n",
      "src/.gitignore": "*.log\n",
      "src/debug.log": "needle\n",
    },
  });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));
  beforeAll(() => initHash());

  it("answers a single-character pattern on a 12 MB line with a cut result, and keeps answering", async () => {
    const r = await d.ok("search", { pattern: "a", max_results: 1, path: "huge/a.txt" });
    expect(r.total).toBe(1);
    expect(r.truncated).toBe(true);
    const [file] = r.matches;
    // over the file tools' 10 MiB limit: no hash and no tags, said in the header
    expect(file).toMatchObject({ path: "huge/a.txt", hash: null, size: 12_000_000 });
    expect(file.lines).toEqual([{ line: 1, tag: null, match: true, text: `${"a".repeat(500)}… [line cut: over 2001 bytes]` }]);
    expect(r.text.split("\n")[2]).toBe(
      "file huge/a.txt · hash none: 12000000 bytes, over the 10485760-byte limit of the file tools (no tags; search is the way to read it)",
    );
    expect(r.text.split("\n")[3]).toMatch(/^1\|---- a{500}… \[line cut: over 2001 bytes\]$/);
    expect((await d.call("list")).success).toBe(true);
    expect(peakRssMb(d.child.pid!)).toBeLessThan(PEAK_RSS_BOUND_MB);
  });

  it("answers `.` on a 17 MB one-line JSON file", async () => {
    const r = await d.ok("search", { pattern: ".", path: "huge" });
    expect(r.matches.map((f: any) => f.path).sort()).toEqual(["huge/a.txt", "huge/api.json"]);
    expect(r.total).toBe(2);
    const json = r.matches.find((f: any) => f.path === "huge/api.json");
    expect(json.lines[0].text.startsWith('[{"id":0,"name":"item 0"')).toBe(true);
    expect((await d.call("list")).success).toBe(true);
    expect(peakRssMb(d.child.pid!)).toBeLessThan(PEAK_RSS_BOUND_MB);
  });

  it("tags a 9 MB line within the limit over the whole line, with the hash of the same bytes", async () => {
    const r = await d.ok("search", { pattern: "a", max_results: 1, path: "fits" });
    const [file] = r.matches;
    expect(file.hash).toBe(fileHash(Buffer.from(nine)));
    expect(file.lines[0].tag).toBe(tagOfBytes(Buffer.from(nine)));
    expect(file.lines[0].text).toBe(`${"a".repeat(500)}… [line cut: 9000000 bytes]`);
    expect(r.text.split("\n")[2]).toBe(`file fits/nine.txt · hash ${file.hash}`);
    expect((await d.call("list")).success).toBe(true);
    expect(peakRssMb(d.child.pid!)).toBeLessThan(PEAK_RSS_BOUND_MB);
  });

  it("leaves out node_modules/, dist/ and build/ (at any depth) as find_file does, and honours a .gitignore", async () => {
    const found = await d.ok("search", { pattern: "needle" });
    expect(found.matches.map((f: any) => f.path)).toEqual(["src/app.js"]);
    expect((await d.ok("find_file", { glob: "**" })).paths.filter((p: string) => !p.startsWith("huge/") && !p.startsWith("fits/"))).toEqual([
      "src/.gitignore",
      "src/app.js",
    ]);
    // a glob does not take ignored files in (rg's -g alone would), even by a .gitignore written a moment ago
    expect((await d.ok("search", { pattern: "needle", glob: ["*.log"] })).matches).toEqual([]);
    writeFileSync(path.join(ws.dir, "src/fresh.txt"), "needle\n");
    writeFileSync(path.join(ws.dir, "src/.gitignore"), "*.log\n*.txt\n");
    expect((await d.ok("search", { pattern: "needle", glob: ["*.txt"] })).matches).toEqual([]);
    // named explicitly, an ignored folder is still searched (rg's rule for paths it is given)
    const named = await d.ok("search", { pattern: "needle", path: "node_modules/pkg" });
    expect(named.matches.map((f: any) => f.path)).toEqual(["node_modules/pkg/index.js"]);
  });
});
