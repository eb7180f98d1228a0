import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { bodyLines } from "../helpers/daemon.js";
import { tmpWorkspace, writeFile } from "../helpers/tmp.js";

/** Real rg on a real git repository, through the built daemon over real pipes. */
describe("search", () => {
  const ws = tmpWorkspace({
    git: true,
    files: {
      "src/user.ts": "export class User {\n  name = 'ada';\n}\n\nfunction helper() {\n  return new User();\n}\n",
      "src/crlf.ts": "const a = 1;\r\nconst needle = 2;\r\nconst c = 3;\r\n",
      "src/flags.sh": "echo start\nrm -rf build\necho done\n",
      "docs/notes.md": "Needle in docs\nneedle lower\n",
      ".gitignore": "dist/\n*.log\n",
      "dist/out.js": "needle in build output\n",
      "debug.log": "needle in a log\n",
      ".hidden/secret.txt": "needle hidden\n",
      "image.bin": Buffer.concat([Buffer.from("needle\0binary\n"), Buffer.alloc(100)]),
      "latin1.txt": Buffer.from("caf\xe9 needle\n", "latin1"),
      "bom.txt": "\ufeffneedle after bom\nsecond\n",
      "noeol.txt": "first\nneedle last",
      "node_modules/pkg/index.js": "export const vendoredMarker = 1;\n",
      "dist/vendored.js": "export const vendoredMarker = 2;\n",
    },
  });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));

  const paths = (r: any) => r.matches.map((f: any) => f.path);

  it("groups matching lines by file, each with the same tag file_read gives it", async () => {
    const r = await d.ok("search", { pattern: "User" });
    expect(paths(r)).toEqual(["src/user.ts"]);
    expect(r.total).toBe(2);
    expect(r.truncated).toBe(false);
    const read = await d.ok("file_read", { path: "src/user.ts" });
    const readLines: string[] = bodyLines(read.text);
    for (const l of r.matches[0].lines) {
      expect(l.match).toBe(true);
      expect(readLines[l.line - 1]).toBe(`${l.line}|${l.tag} ${l.text}`);
    }
    expect(r.matches[0].hash).toBe(read.hash);
    expect(r.text).toBe(["2 matching lines in 1 file:", "", `file src/user.ts · hash ${read.hash}`, readLines[0], "--", readLines[5]].join("\n"));
  });

  it("gives each file's hash, so an edit goes straight from a hit to file_write", async () => {
    writeFile(ws.dir, "src/edit-me.ts", "const a = 1;\nconst target = 2;\nconst c = 3;\n");
    const r = await d.ok("search", { pattern: "target", path: "src/edit-me.ts" });
    const [header, hit] = r.text.split("\n").slice(2);
    const hash = /^file src\/edit-me\.ts · hash ([0-9a-f]{16})$/.exec(header)![1];
    const [, n, tag] = /^(\d+)\|([0-9A-F]{4}) /.exec(hit)!;
    const w = await d.ok("file_write", { path: "src/edit-me.ts", hash, edits: [{ type: "replace", startline: `${n}:${tag}`, content: "const target = 20;" }] });
    expect(w.previous_hash).toBe(hash);
    expect(readFileSync(path.join(ws.dir, "src/edit-me.ts"), "utf8")).toBe("const a = 1;\nconst target = 20;\nconst c = 3;\n");
  });

  it("tags CRLF lines without their \\r, a last line without a newline, and a BOM file without the BOM", async () => {
    for (const [file, pattern] of [
      ["src/crlf.ts", "needle"],
      ["noeol.txt", "needle"],
      ["bom.txt", "needle"],
    ]) {
      const r = await d.ok("search", { pattern, path: file });
      const read = await d.ok("file_read", { path: file });
      const l = r.matches[0].lines[0];
      expect(bodyLines(read.text)[l.line - 1]).toBe(`${l.line}|${l.tag} ${l.text}`);
      expect(l.text).not.toMatch(/[\r\ufeff]/);
    }
  });

  it("tags a line that is not UTF-8 over its raw bytes, and says it is not UTF-8", async () => {
    const r = await d.ok("search", { pattern: "needle", path: "latin1.txt" });
    const { tagOfBytes, initHash } = await import("../../src/core/hash.js");
    await initHash();
    const [line] = r.matches[0].lines;
    expect(line.tag).toBe(tagOfBytes(Buffer.from("caf\xe9 needle", "latin1")));
    expect(line).toMatchObject({ text: "caf\ufffd needle [not UTF-8: invalid bytes shown as \ufffd]", not_utf8: true });
    expect(r.matches[0].not_utf8).toBe(true);
    const text = r.text.split("\n");
    expect(text[2]).toMatch(/^file latin1\.txt · hash [0-9a-f]{16} · not UTF-8: file_read refuses it/);
    expect(text[3]).toBe(`1|${line.tag} caf\ufffd needle [not UTF-8: invalid bytes shown as \ufffd]`);
    const utf8 = await d.ok("search", { pattern: "Needle", path: "docs" });
    expect(utf8.matches[0].not_utf8).toBeUndefined();
    expect(utf8.matches[0].lines[0].not_utf8).toBeUndefined();
  });

  it("renders context lines the same way, with -- between separate groups", async () => {
    const r = await d.ok("search", { pattern: "class User|return new", context: 1, path: "src" });
    const lines = r.matches[0].lines;
    expect(lines.map((l: any) => [l.line, l.match])).toEqual([
      [1, true],
      [2, false],
      [5, false],
      [6, true],
      [7, false],
    ]);
    const read = bodyLines((await d.ok("file_read", { path: "src/user.ts" })).text);
    expect(r.text.split("\n").slice(2)).toEqual([`file src/user.ts · hash ${r.matches[0].hash}`, read[0], read[1], "--", read[4], read[5], read[6]]);
  });

  it("uses smart case unless case_sensitive is given", async () => {
    expect((await d.ok("search", { pattern: "needle", path: "docs" })).total).toBe(2);
    expect((await d.ok("search", { pattern: "Needle", path: "docs" })).total).toBe(1);
    expect((await d.ok("search", { pattern: "needle", path: "docs", case_sensitive: true })).total).toBe(1);
    expect((await d.ok("search", { pattern: "Needle", path: "docs", case_sensitive: false })).total).toBe(2);
  });

  it("fixed_strings searches literally", async () => {
    writeFile(ws.dir, "src/regex.ts", "const re = /a.b/;\nconst s = 'axb';\n");
    expect((await d.ok("search", { pattern: "a.b", path: "src/regex.ts" })).total).toBe(2);
    expect((await d.ok("search", { pattern: "a.b", path: "src/regex.ts", fixed_strings: true })).total).toBe(1);
  });

  it("glob includes and excludes", async () => {
    expect(paths(await d.ok("search", { pattern: "needle", glob: ["*.md"] }))).toEqual(["docs/notes.md"]);
    const r = await d.ok("search", { pattern: "needle", glob: ["!*.md", "!*.txt"] });
    expect(paths(r)).toEqual(["src/crlf.ts"]);
  });

  it("keeps ignored files out when a glob names them, as find_file does (rg's -g alone would take them in)", async () => {
    expect(paths(await d.ok("search", { pattern: "needle", glob: ["*.log"] }))).toEqual([]);
    expect(paths(await d.ok("search", { pattern: "needle", glob: ["{*.log,*.md}"] }))).toEqual(["docs/notes.md"]);
    expect((await d.ok("find_file", { glob: "*.log" })).paths).toEqual([]);
    // by git's word as the disk is now: a .gitignore written a moment ago counts
    writeFile(ws.dir, "fresh/a.txt", "needle\n");
    writeFile(ws.dir, "fresh/.gitignore", "*.txt\n");
    expect(paths(await d.ok("search", { pattern: "needle", path: "fresh", glob: ["*.txt"] }))).toEqual([]);
    // a path named explicitly is still searched, glob or not
    expect(paths(await d.ok("search", { pattern: "needle", path: "debug.log", glob: ["*.log"] }))).toEqual(["debug.log"]);
    expect(paths(await d.ok("search", { pattern: "needle", path: "dist", glob: ["*.js"] }))).toEqual(["dist/out.js"]);
  });

  it("keeps hidden files out when a glob names them, unless hidden:true", async () => {
    writeFile(ws.dir, "globbed/.dot.txt", "needle\n");
    expect(paths(await d.ok("search", { pattern: "needle", path: "globbed", glob: ["*.txt"] }))).toEqual([]);
    expect(paths(await d.ok("search", { pattern: "needle", glob: [".*"] }))).toEqual([]);
    expect(paths(await d.ok("search", { pattern: "needle", path: "globbed", glob: ["*.txt"], hidden: true }))).toEqual(["globbed/.dot.txt"]);
    expect(paths(await d.ok("search", { pattern: "needle", path: "globbed/.dot.txt", glob: ["*.txt"] }))).toEqual(["globbed/.dot.txt"]); // named
  });

  it("respects .gitignore, and skips hidden files unless hidden:true (never .git/)", async () => {
    const all = paths(await d.ok("search", { pattern: "needle" }));
    expect(all).not.toContain("dist/out.js");
    expect(all).not.toContain("debug.log");
    expect(all).not.toContain(".hidden/secret.txt");
    const hidden = paths(await d.ok("search", { pattern: "needle", hidden: true }));
    expect(hidden).toContain(".hidden/secret.txt");
    expect(hidden).not.toContain("dist/out.js");
    const git = await d.ok("search", { pattern: "repositoryformatversion", hidden: true });
    expect(git.total).toBe(0);
  });

  it("never returns the temp files of file writes, hidden:true or not", async () => {
    writeFile(ws.dir, "src/.user.ts.tl-0123456789ab.tmp", "leftover_temp_marker\n");
    writeFile(ws.dir, "src/.kept.txt", "leftover_temp_marker\n");
    expect(paths(await d.ok("search", { pattern: "leftover_temp_marker", hidden: true }))).toEqual(["src/.kept.txt"]);
  });

  it("in a git repository, git's rules alone decide, for search as for find_file: node_modules/ is searched unless ignored", async () => {
    const r = await d.ok("search", { pattern: "vendoredMarker" });
    expect(paths(r)).toEqual(["node_modules/pkg/index.js"]); // dist/ is in .gitignore
    expect((await d.ok("find_file", { query: "vendored" })).paths).toEqual([]);
    expect((await d.ok("find_file", { glob: "node_modules/**" })).paths).toEqual(["node_modules/pkg/index.js"]);
    expect((await d.ok("find_file", { glob: "dist/**" })).paths).toEqual([]);
  });

  it("skips binary files, found by walking or named", async () => {
    expect(paths(await d.ok("search", { pattern: "binary" }))).toEqual([]);
    const named = await d.ok("search", { pattern: "needle", path: "image.bin" });
    expect(named.matches).toEqual([]);
    expect(named.text).toMatch(/binary file/);
  });

  it("takes a pattern that starts with a dash as a pattern, not a flag", async () => {
    const r = await d.ok("search", { pattern: "-rf" });
    expect(paths(r)).toEqual(["src/flags.sh"]);
    expect(r.matches[0].lines[0].text).toBe("rm -rf build");
    expect((await d.ok("search", { pattern: "--files" })).total).toBe(0);
  });

  it("says in info where its ripgrep is", async () => {
    const info = await d.ok("info", { tool_id: "search" });
    expect(info.state.ripgrep).toMatch(/\/rg$/);
  });

  it("no match is a success with an empty result", async () => {
    const r = await d.ok("search", { pattern: "zzz_not_anywhere_zzz" });
    expect(r).toMatchObject({ matches: [], total: 0, truncated: false, text: "No matches." });
  });

  it("caps matching lines, stops there and says how to narrow", async () => {
    writeFile(ws.dir, "many/a.txt", Array.from({ length: 50 }, (_, i) => `hit ${i}\nmiss\n`).join(""));
    writeFile(ws.dir, "many/b.txt", "hit b\n");
    const r = await d.ok("search", { pattern: "hit", path: "many", max_results: 5, context: 1 });
    expect(r.total).toBe(5);
    expect(r.truncated).toBe(true);
    expect(r.matches.flatMap((f: any) => f.lines).filter((l: any) => l.match)).toHaveLength(5);
    // the last kept match keeps its after-context; the cut-off match's before-context is gone (rg may send b.txt first)
    const a = r.matches.find((f: any) => f.path === "many/a.txt").lines;
    const lastMatch = a.filter((l: any) => l.match).pop().line;
    expect(a[a.length - 1]).toMatchObject({ line: lastMatch + 1, match: false });
    expect(r.text).toMatch(/Showing the first 5 matching lines; there are more\. Narrow the search/);
    const all = await d.ok("search", { pattern: "hit", path: "many" });
    expect(all).toMatchObject({ total: 51, truncated: false });
  });

  it("bounds the answer's size under the text cap: the rest is left out, and the note saying so is not cut off", async () => {
    writeFile(ws.dir, "wide/a.txt", `${"x".repeat(440)} hit\n`.repeat(1000));
    writeFile(ws.dir, "wide/b.txt", `${"y".repeat(440)} hit\n`.repeat(1000));
    const r = await d.ok("search", { pattern: "hit", path: "wide", max_results: 2000 });
    const shown = r.matches.flatMap((f: any) => f.lines);
    expect(shown.length).toBeGreaterThan(190);
    expect(shown.length).toBeLessThan(200); // 90,000 / (445 + 16)
    expect(r.text.length).toBeLessThan(100_000);
    expect(r.total).toBe(shown.length);
    expect(r.truncated).toBe(true);
    expect(r.text.split("\n").slice(-3).join("\n")).toMatch(/The answer.s size cap \(90000 characters of text, or \d+ bytes of files read\) was reached/);
  });

  it("cuts long lines around the match, keeps the whole line's tag, and says so", async () => {
    const long = `${"x".repeat(100_000)}NEEDLE${"y".repeat(50_000)}`;
    writeFile(ws.dir, "min/app.min.js", `${long}\nshort NEEDLE\n`);
    const r = await d.ok("search", { pattern: "NEEDLE", path: "min" });
    const [first, second] = r.matches[0].lines;
    expect(first.text.length).toBeLessThan(600);
    expect(first.text).toContain("NEEDLE");
    expect(first.text).toMatch(/^… x+NEEDLEy+… \[line cut: 150006 bytes\]$/);
    expect(second.text).toBe("short NEEDLE");
    const tags = await d.ok("file_read", { path: "min/app.min.js", lines: [1] });
    expect(bodyLines(tags.text)).toEqual([`1|${first.tag}`]);
    expect(r.truncated).toBe(true);
    expect(r.text).toMatch(/were cut around their first match/);
  });

  it("centres the window on the match in a line just past the window's length too", async () => {
    // 692 characters: decoded whole, but longer than the 500-character window, its match near its end
    writeFile(ws.dir, "mid/line.txt", `${"ab".repeat(247)}aneedleb${"ab".repeat(95)}\n`);
    const [hit] = (await d.ok("search", { pattern: "needle", path: "mid" })).matches[0].lines;
    expect(hit.text).toMatch(/^… (ab)+aneedleb(ab)+ \[line cut: 692 bytes\]$/);
  });

  it("refuses a blank pattern, an invalid regex, a bad glob and paths outside the root or missing", async () => {
    for (const pattern of ["", "   "]) {
      const r = await d.call("search", { pattern });
      expect(r.result.code).toBe("INVALID_PARAMS");
      expect(r.result.message).toMatch(/pattern: must not be blank/);
    }
    const multiline = await d.call("search", { pattern: "User {\n  name" });
    expect(multiline.result.message).toMatch(/pattern: has a line break, but search matches one line at a time/);
    const bad = await d.call("search", { pattern: "foo(bar" });
    expect(bad.result.code).toBe("INVALID_PARAMS");
    expect(bad.result.message).toMatch(/^pattern: not a valid regular expression \(unclosed group.*fixed_strings/);
    const glob = await d.call("search", { pattern: "a", glob: ["[oops"] });
    expect(glob.result.code).toBe("INVALID_PARAMS");
    expect(glob.result.message).toMatch(/^glob: .*unclosed character class/);
    expect((await d.call("search", { pattern: "a", path: "../" })).result.code).toBe("PATH_OUTSIDE_ROOT");
    expect((await d.call("search", { pattern: "a", path: "/etc" })).result.code).toBe("PATH_OUTSIDE_ROOT");
    expect((await d.call("search", { pattern: "a", path: "nope/" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("search", { pattern: "a", path: ".git" })).result.code).toBe("PATH_FORBIDDEN");
    expect((await d.call("search", { pattern: "a", max_results: 0 })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("search", { pattern: "a", colour: true })).result.message).toMatch(/colour: unknown field/);
  });

  it("refuses a FIFO named as path at once, and never opens one while walking", async () => {
    execFileSync("mkfifo", [path.join(ws.dir, "src/fifo")]);
    const named = await d.call("search", { pattern: "x", path: "src/fifo" });
    expect(named.result.code).toBe("NOT_A_FILE");
    expect(named.result.message).toMatch(/^src\/fifo is a FIFO \(named pipe\), not a file or folder/);
    // rg skips what is not a regular file in a walk: the folder holding the FIFO answers, as does everything
    const walked = await d.ok("search", { pattern: "User", path: "src" });
    expect(paths(walked)).toEqual(["src/user.ts"]);
    expect(rgChildren(d.child.pid!)).toEqual([]);
  });

  it("refuses a character device named as path at once, and never opens one while walking", async (ctx) => {
    try {
      execFileSync("mknod", [path.join(ws.dir, "src/zero"), "c", "1", "5"], { stdio: "ignore" }); // /dev/zero: never ends
    } catch {
      ctx.skip(); // mknod needs CAP_MKNOD (root); shown as skipped, not passed
    }
    const named = await d.call("search", { pattern: "x", path: "src/zero" });
    expect(named.result.code).toBe("NOT_A_FILE");
    expect(named.result.message).toMatch(/^src\/zero is a character device, not a file or folder/);
    expect(paths(await d.ok("search", { pattern: "User", path: "src" }))).toEqual(["src/user.ts"]);
  });

  it("a cancelled search answers CANCELLED and its rg is gone", async () => {
    // PCRE2 (a look-ahead needs it) backtracks through (a|aa)* for every line: seconds per hundred lines, a search that runs on
    writeFile(ws.dir, "slow/lines.txt", `${"a".repeat(25)}\n`.repeat(20_000));
    const pending = d.call("search", { pattern: "^(a|aa)*(?=b)", path: "slow" }, { id: "slow" });
    await until(() => rgChildren(d.child.pid!).length > 0);
    expect(rgChildren(d.child.pid!)).toHaveLength(1);
    const cancel = await d.ok("cancel", { call_id: "slow" });
    expect(cancel.cancelled).toBe(true);
    const r = await pending;
    expect(r.result.code).toBe("CANCELLED");
    await until(() => rgChildren(d.child.pid!).length === 0);
    expect(rgChildren(d.child.pid!)).toEqual([]);
  });
});

/** Live rg processes whose parent is `ppid` (zombies count as gone: they have exited). */
function rgChildren(ppid: number): number[] {
  const out: number[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (comm === "rg" && Number(fields[1]) === ppid && fields[0] !== "Z") out.push(Number(pid));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** Waits for a condition about another process, which sends no event we could wait on. */
async function until(test: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !test(); i++) await new Promise((r) => setTimeout(r, 10));
}
