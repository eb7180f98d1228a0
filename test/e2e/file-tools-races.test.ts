import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileHash, initHash } from "../../src/core/hash.js";
import { type DaemonClient, MAIN, daemonForSuite, startDaemon } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

await initHash();

const ws = tmpWorkspace({ git: true });
let d: DaemonClient;
daemonForSuite(ws, (c) => (d = c));
const at = (rel: string) => path.join(ws.dir, rel);

describe("concurrent sessions", () => {
  it("lets exactly one of two writes from the same hash win, the other gets HASH_MISMATCH", async () => {
    writeFileSync(at("race.txt"), "v0\n");
    for (let round = 0; round < 10; round++) {
      const { hash } = await d.ok("file_read", { path: "race.txt" }, { session: "a" });
      await d.ok("file_read", { path: "race.txt" }, { session: "b" });
      const [a, b] = await Promise.all([
        d.call("file_write", { path: "race.txt", hash, content: `a${round}\n` }, { session: "a" }),
        d.call("file_write", { path: "race.txt", hash, content: `b${round}\n` }, { session: "b" }),
      ]);
      expect([a.success, b.success].filter(Boolean)).toHaveLength(1);
      const loser = a.success ? b : a;
      expect(loser.result.code).toBe("HASH_MISMATCH");
      expect(readFileSync(at("race.txt"), "utf8")).toBe(a.success ? `a${round}\n` : `b${round}\n`);
      expect(loser.result.current_hash).toBe(fileHash(readFileSync(at("race.txt"))));
    }
  });

  it("lets exactly one of two sessions create the same new file", async () => {
    for (let round = 0; round < 5; round++) {
      const name = `created-${round}.txt`;
      const [a, b] = await Promise.all([
        d.call("file_write", { path: name, content: "from a\n" }, { session: "a" }),
        d.call("file_write", { path: name, content: "from b\n" }, { session: "b" }),
      ]);
      expect([a.success, b.success].filter(Boolean)).toHaveLength(1);
      expect((a.success ? b : a).result.code).toBe("ALREADY_EXISTS");
      expect(readFileSync(at(name), "utf8")).toBe(a.success ? "from a\n" : "from b\n");
    }
  });

  it("loses no update when sessions increment a counter with read, write, retry", async () => {
    writeFileSync(at("counter.txt"), "0\n");
    const SESSIONS = 4;
    const INCREMENTS = 8;
    const worker = async (session: string) => {
      for (let done = 0; done < INCREMENTS; ) {
        const r = await d.ok("file_read", { path: "counter.txt" }, { session });
        const value = Number(r.text.split("\n")[1].split(" ")[1]);
        const w = await d.call("file_write", { path: "counter.txt", hash: r.hash, content: `${value + 1}\n` }, { session });
        if (w.success) done++;
        else expect(w.result.code).toBe("HASH_MISMATCH");
      }
    };
    await Promise.all(Array.from({ length: SESSIONS }, (_, i) => worker(`s${i}`)));
    expect(readFileSync(at("counter.txt"), "utf8")).toBe(`${SESSIONS * INCREMENTS}\n`);
  });

  it("answers 300 parallel reads, all with the file's hash", async () => {
    const text = Array.from({ length: 150 }, (_, i) => `line ${i}`).join("\n") + "\n";
    writeFileSync(at("many.txt"), text);
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => d.call("file_read", { path: "many.txt" }, { session: `r${i % 7}` })));
    for (const r of results) {
      expect(r.success).toBe(true);
      expect(r.result.hash).toBe(fileHash(Buffer.from(text)));
      expect(r.result.total_lines).toBe(150);
    }
  });
});

/** A bare client for the kill test: a SIGKILL can cut the last stdout line, which the shared helper would choke on. */
function killableDaemon(root: string) {
  const child = spawn(process.execPath, [MAIN, "--root", root], { stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.on("error", () => undefined); // EPIPE after the kill
  const waiters = new Map<number, (r: any) => void>();
  let nextId = 1;
  let onReady!: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  createInterface({ input: child.stdout }).on("line", (line) => {
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      return; // the line the kill cut short
    }
    if (msg.event === "ready") onReady();
    else if (typeof msg.call_id === "number") waiters.get(msg.call_id)?.(msg);
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const call = (tool_id: string, params: Record<string, unknown>): Promise<any> =>
    new Promise((resolve) => {
      const id = nextId++;
      waiters.set(id, resolve);
      child.stdin.write(JSON.stringify({ tool_id, session_id: "k", toolcall_id: id, approved: true, params }) + "\n");
    });
  return { child, ready, exited, call };
}

describe("a daemon killed mid-write", () => {
  it("leaves every file whole, old or new, never torn", async () => {
    const victim = killableDaemon(ws.dir);
    await victim.ready;
    const FILES = 4;
    const LINES = 20_000; // 140 KB per version: a write that is not atomic would be caught half-done
    const version = (k: number) => `${k}`.padStart(6, "0").concat("\n").repeat(LINES);
    const names = Array.from({ length: FILES }, (_, i) => `kill/f${i}.txt`);
    for (const name of names) expect((await victim.call("file_write", { path: name, content: version(0) })).success).toBe(true);

    let written = 0;
    let killed = false;
    let failed = "";
    const writer = async (name: string) => {
      for (let k = 1; !killed; k++) {
        const r = await victim.call("file_write", { path: name, hash: fileHash(Buffer.from(version(k - 1))), content: version(k) });
        if (!r.success) failed = JSON.stringify(r.result);
        else written++;
      }
    };
    for (const name of names) void writer(name);
    // Kill once writes are flowing on every file; each writer has its next write in flight.
    while (written < FILES * 2 && !failed) await new Promise((r) => setTimeout(r, 5));
    killed = true;
    victim.child.kill("SIGKILL");
    await victim.exited;
    expect(failed).toBe("");

    for (const name of names) {
      const text = readFileSync(at(name), "utf8");
      expect(text, name).toBe(text.slice(0, 7).repeat(LINES));
    }
    // Temp files may be left behind by a SIGKILL, but a target is never replaced by a partial one.
    expect(
      readdirSync(at("kill"))
        .filter((f) => !f.startsWith("."))
        .sort(),
    ).toEqual(names.map((n) => path.basename(n)).sort());
  });
});

const python = spawnSync("python3", ["-c", "import ctypes; ctypes.CDLL(None).renameat2"]).status === 0;

/** Swaps two paths with renameat2(RENAME_EXCHANGE) as fast as it can, until killed (or a generous bound). */
const SWAPPER = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
deadline = time.monotonic() + 300
print("swapping", flush=True)
while time.monotonic() < deadline:
    for _ in range(1000):
        libc.renameat2(-100, a, -100, b, 2)
`;

describe.skipIf(!python)("a folder swapped for a symlink to outside while calls run (renameat2 exchanges)", () => {
  it("never reads outside content, and never writes, creates, moves or deletes outside the root", async () => {
    const ROUNDS = 150;
    const outer = tmpWorkspace();
    const root = path.join(outer.dir, "root");
    const out = path.join(outer.dir, "outside");
    const same = "same\n";
    mkdirSync(path.join(root, "d"), { recursive: true });
    mkdirSync(out);
    writeFileSync(path.join(root, "d/secret.txt"), "inside\n");
    writeFileSync(path.join(out, "secret.txt"), "OUTSIDE\n");
    for (let k = 0; k < ROUNDS; k++) {
      for (const name of [`w${k}.txt`, `del${k}.txt`, `mv${k}.txt`]) {
        writeFileSync(path.join(root, "d", name), same);
        writeFileSync(path.join(out, name), same);
      }
    }
    symlinkSync(out, path.join(root, "evil"));
    const snapshot = () =>
      readdirSync(out)
        .sort()
        .map((f) => `${f}=${readFileSync(path.join(out, f), "utf8")}`);
    const before = snapshot();

    const d = await startDaemon(root);
    const swapper = spawn("python3", ["-c", SWAPPER, path.join(root, "d"), path.join(root, "evil")], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await new Promise<void>((resolve) => swapper.stdout.once("data", () => resolve()));
      const hash = fileHash(Buffer.from(same));
      const outcomes: Record<string, number> = {};
      const count = (what: string, r: { success: boolean; result: any }) => {
        const key = `${what} ${r.success ? "ok" : r.result.code}`;
        outcomes[key] = (outcomes[key] ?? 0) + 1;
      };
      for (let k = 0; k < ROUNDS; k++) {
        const [read, write, create, del, move] = await Promise.all([
          d.call("file_read", { path: "d/secret.txt" }),
          d.call("file_write", { path: `d/w${k}.txt`, hash, content: `written ${k}\n` }),
          d.call("file_write", { path: `d/new${k}.txt`, content: `created ${k}\n` }),
          d.call("file_delete", { path: `d/del${k}.txt`, hash }),
          d.call("file_move", { from: `d/mv${k}.txt`, to: `d/moved${k}.txt`, hash }),
        ]);
        if (read.success) expect(read.result.text).not.toContain("OUTSIDE");
        for (const [what, r] of Object.entries({ read, write, create, del, move })) {
          count(what, r);
          // A refusal is fine; an INTERNAL is not (every race must end in a code a caller can act on).
          if (!r.success) expect(r.result.code, JSON.stringify(r.result)).not.toBe("INTERNAL");
        }
      }
      swapper.kill("SIGKILL");
      expect(snapshot()).toEqual(before);
      // The race was real: some calls went through and some were refused.
      const ok = Object.entries(outcomes)
        .filter(([k]) => k.endsWith(" ok"))
        .reduce((n, [, v]) => n + v, 0);
      expect(ok, JSON.stringify(outcomes)).toBeGreaterThan(0);
      expect(ok, JSON.stringify(outcomes)).toBeLessThan(ROUNDS * 5);
    } finally {
      swapper.kill("SIGKILL");
      await d.close();
      outer.cleanup();
    }
  });
});
