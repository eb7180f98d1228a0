import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createInterface } from "node:readline";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileHash, initHash, tagOf } from "../../src/core/hash.js";
import { type DaemonClient, MAIN, daemonForSuite, startDaemon } from "../helpers/daemon.js";
import { git, tmpWorkspace } from "../helpers/tmp.js";

await initHash();

const hashOf = (s: string | Buffer) => fileHash(typeof s === "string" ? Buffer.from(s) : s);
const isRoot = process.getuid?.() === 0;

describe("the size limit on write (--max-file-bytes 1000)", () => {
  const ws = tmpWorkspace({ files: { "small.txt": "x\n".repeat(400) } });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c), ["--max-file-bytes", "1000"]);

  it("refuses a content write or an edit that would make the file larger than the limit, changing nothing", async () => {
    const create = await d.call("file_write", { path: "big.txt", content: "y".repeat(2000) });
    expect(create.result).toMatchObject({ code: "TOO_LARGE", max_bytes: 1000 });
    expect(create.result.message).toContain("big.txt would be");
    expect(existsSync(path.join(ws.dir, "big.txt"))).toBe(false);
    // Multi-byte characters: 600 of them are 1800 bytes, over the limit though the string is short.
    expect((await d.call("file_write", { path: "wide.txt", content: "é".repeat(600) })).result.code).toBe("TOO_LARGE");
    const grow = await d.call("file_write", {
      path: "small.txt",
      hash: hashOf("x\n".repeat(400)),
      edits: [{ type: "insert", startline: `400:${tagOf("x")}`, content: "z".repeat(300) }],
    });
    expect(grow.result).toMatchObject({ code: "TOO_LARGE", size: 1101 });
    expect(readFileSync(path.join(ws.dir, "small.txt"), "utf8")).toBe("x\n".repeat(400));
    expect((await d.call("file_write", { path: "fits.txt", content: "y".repeat(1000) })).success).toBe(true);
  });
});

describe("edit batches are bounded", () => {
  const LINES = 100_000;
  const text = Array.from({ length: LINES }, (_, i) => `line ${i}`).join("\n") + "\n";
  const ws = tmpWorkspace({ files: { "huge.txt": text } });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));
  const tags = Array.from({ length: LINES }, (_, i) => tagOf(`line ${i}`));
  const counts = new Map<string, number>();
  for (const t of tags) counts.set(t, (counts.get(t) ?? 0) + 1);
  const unique = tags.filter((t) => counts.get(t) === 1);

  it("refuses 100,000 bare-tag inserts with INVALID_PARAMS naming the limit, and answers a list sent meanwhile", async () => {
    const edits = Array.from({ length: LINES }, (_, i) => ({ type: "insert", startline: unique[i % unique.length], content: "x" }));
    const batch = d.call("file_write", { path: "huge.txt", hash: hashOf(text), edits }, { approved: false });
    const list = d.call("list", {});
    const [b, l] = await Promise.all([batch, list]);
    expect(l.success).toBe(true);
    expect(b.result.code).toBe("INVALID_PARAMS");
    expect(b.result.message).toContain("at most 2000 edits");
  });

  it("applies a batch at the limit of bare tags on a 100,000-line file (each tag found through one index)", async () => {
    const edits = unique.slice(0, 2000).map((t) => ({ type: "insert", startline: t, content: "inserted" }));
    const r = await d.ok("file_write", { path: "huge.txt", hash: hashOf(text), edits }, { approved: false });
    expect(r.total_lines).toBe(LINES + 2000);
    expect(r.dry_run).toBe(true);
    expect(r.shifts.length).toBeGreaterThan(1000);
  });
});

describe("temp files of a killed daemon", () => {
  const ws = tmpWorkspace({ git: true, files: { "a.txt": "a\n", "sub/b.txt": "b\n" } });
  beforeAll(() => {
    git(ws.dir, "add", ".");
    git(ws.dir, "commit", "-qm", "init");
  });
  afterAll(() => ws.cleanup());

  it("removes those of a daemon that is gone at start, and keeps the one of a live daemon out of git_status, search and git_add", async () => {
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const hex = (pid: number) => pid.toString(16).padStart(8, "0");
    const stale = [`.a.txt.tl-${hex(Number(dead.stdout))}beef.tmp`, `sub/.b.txt.tl-${hex(Number(dead.stdout))}0001.tmp`, ".a.txt.tl-ffffffff1234.tmp"];
    const live = `sub/.b.txt.tl-${hex(process.pid)}abcd.tmp`;
    for (const rel of [...stale, live]) writeFileSync(path.join(ws.dir, rel), "half-written TEMPMARKER\n");
    // git sees them before the daemon ran.
    expect(git(ws.dir, "status", "--porcelain")).toContain(".a.txt.tl-");

    const d = await startDaemon(ws.dir);
    try {
      for (const rel of stale) expect(existsSync(path.join(ws.dir, rel)), rel).toBe(false);
      expect(existsSync(path.join(ws.dir, live))).toBe(true);
      const status = await d.ok("git_status");
      expect(status.untracked).toEqual([]);
      expect(status.text).not.toContain(".tl-");
      const search = await d.ok("search", { pattern: "TEMPMARKER", hidden: true });
      expect(JSON.stringify(search)).not.toContain(".tl-");
      const add = await d.ok("git_add", {}, { approved: false });
      expect(JSON.stringify(add)).not.toContain(".tl-");
      // The pattern lives in info/exclude, which no commit carries; the tracked files are untouched.
      expect(readFileSync(path.join(ws.dir, ".git/info/exclude"), "utf8")).toContain(".*.tl-????????????.tmp");
      expect(git(ws.dir, "status", "--porcelain")).toBe("");
    } finally {
      await d.close();
    }
    // A second start adds the pattern once.
    const again = await startDaemon(ws.dir);
    await again.close();
    expect(readFileSync(path.join(ws.dir, ".git/info/exclude"), "utf8").split(".*.tl-????????????.tmp").length).toBe(2);
  });

  it("removes them outside git too (a bounded walk), and search skips a live one there", async () => {
    const plain = tmpWorkspace({ files: { "x/y.txt": "y\n" } });
    try {
      writeFileSync(path.join(plain.dir, "x/.y.txt.tl-ffffffff0000.tmp"), "half TEMPMARKER\n");
      const live = `x/.y.txt.tl-${process.pid.toString(16).padStart(8, "0")}0000.tmp`;
      writeFileSync(path.join(plain.dir, live), "half TEMPMARKER\n");
      const d = await startDaemon(plain.dir);
      const search = await d.ok("search", { pattern: "TEMPMARKER", hidden: true });
      expect(JSON.stringify(search)).not.toContain(".tl-");
      await d.close();
      expect(readdirSync(path.join(plain.dir, "x")).sort()).toEqual([path.basename(live), "y.txt"].sort());
    } finally {
      plain.cleanup();
    }
  });
});

/**
 * The daemon as another user, over JSON lines (the shared helper spawns node directly). Its HOME is a folder of its own
 * outside the root: the daemon refuses a state folder inside the workspace.
 */
function daemonAs(uid: number, root: string) {
  const home = mkdtempSync(path.join(tmpdir(), "tool-layer-home-"));
  chownSync(home, uid, uid);
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  delete env.XDG_STATE_HOME;
  const child = spawn("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, MAIN, "--root", root], {
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (b) => (stderr += b));
  const waiters = new Map<number, (r: any) => void>();
  let next = 1;
  let onReady!: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  createInterface({ input: child.stdout }).on("line", (line) => {
    const msg = JSON.parse(line);
    if (msg.event === "ready") onReady();
    else if (typeof msg.call_id === "number") waiters.get(msg.call_id)?.(msg);
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return {
    ready: Promise.race([ready, exited.then(() => Promise.reject(new Error(`daemon exited: ${stderr}`)))]),
    call: (tool_id: string, params: Record<string, unknown>): Promise<any> =>
      new Promise((resolve) => {
        const id = next++;
        waiters.set(id, resolve);
        child.stdin.write(JSON.stringify({ tool_id, session_id: "u", toolcall_id: id, approved: true, params }) + "\n");
      }),
    close: async () => {
      child.stdin.end();
      await exited;
      rmSync(home, { recursive: true, force: true });
    },
  };
}

describe.skipIf(!isRoot)("operating-system errors with a path and advice (real EACCES as user 65534, real ENOSPC on a tiny tmpfs)", () => {
  it("answers PERMISSION_DENIED naming the root-relative path for an unreadable file, a read-only folder and a file it may not write", async () => {
    const ws = tmpWorkspace({ files: { "secret.txt": "s\n", "ro/a.txt": "a\n", "open.txt": "o\n" } });
    try {
      chmodSync(ws.dir, 0o755);
      chmodSync(path.join(ws.dir, "secret.txt"), 0o600);
      chmodSync(path.join(ws.dir, "ro"), 0o555);
      const d = daemonAs(65534, ws.dir);
      await d.ready;
      try {
        const read = await d.call("file_read", { path: "secret.txt" });
        expect(read.result.code).toBe("PERMISSION_DENIED");
        expect(read.result.message).toMatch(/^secret\.txt: /);
        expect(read.result.message).not.toContain(ws.dir);
        const create = await d.call("file_write", { path: "ro/new.txt", content: "x\n" });
        expect(create.result.code).toBe("PERMISSION_DENIED");
        expect(create.result.message).toMatch(/^ro\/new\.txt/);
        expect(create.result.message).not.toContain(ws.dir);
        const overwrite = await d.call("file_write", { path: "ro/a.txt", hash: hashOf("a\n"), content: "b\n" });
        expect(overwrite.result.code).toBe("PERMISSION_DENIED");
        expect(overwrite.result.message).toContain("ro/a.txt is not writable by the daemon's user");
        const forced = await d.call("file_delete", { path: "ro/a.txt", hash: hashOf("a\n"), force_readonly: true });
        expect(forced.result.code).toBe("PERMISSION_DENIED");
        expect(forced.result.message).toMatch(/^ro\/a\.txt: /);
        expect(readFileSync(path.join(ws.dir, "ro/a.txt"), "utf8")).toBe("a\n");
        expect(readdirSync(path.join(ws.dir, "ro"))).toEqual(["a.txt"]);
      } finally {
        await d.close();
      }
    } finally {
      chmodSync(path.join(ws.dir, "ro"), 0o755);
      ws.cleanup();
    }
  });

  it("answers NO_SPACE naming the path when the disk is full, and leaves no temp file", async () => {
    const ws = tmpWorkspace({ files: { "keep.txt": "k\n" } });
    const small = path.join(ws.dir, "small");
    mkdirSync(small);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", small]);
    try {
      const d = await startDaemon(ws.dir);
      try {
        const r = await d.call("file_write", { path: "small/big.txt", content: "z".repeat(200_000) });
        expect(r.result.code).toBe("NO_SPACE");
        expect(r.result.message).toMatch(/^small\/big\.txt could not be written: the disk .* is full/);
        expect(readdirSync(small)).toEqual([]);
        expect((await d.call("file_write", { path: "small/ok.txt", content: "fits\n" })).success).toBe(true);
      } finally {
        await d.close();
      }
    } finally {
      execFileSync("umount", [small]);
      ws.cleanup();
    }
  });
});
