import { rmSync, statSync, utimesSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { FileIndex } from "../../src/vfs/file-index.js";
import { IgnoreRules } from "../../src/vfs/ignore-rules.js";
import { gitChangedPaths, rescanFolders } from "../../src/vfs/rescan.js";
import { gitReader } from "../../src/vfs/listing.js";
import { Supervisor } from "../../src/platform/supervisor.js";

const supervisor = new Supervisor();
import { git, tmpWorkspace, writeFile } from "../helpers/tmp.js";

// The kernel's dropped events cannot be provoked on demand, so the recovery is tested on real files directly.
afterAll(() => supervisor.stop());

describe("rescan after a flood", () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  it("finds files changed, created and deleted in the flood's folders, and only those", async () => {
    const ws = tmpWorkspace({
      files: {
        "d/same.txt": "1",
        "d/changed.txt": "1",
        "d/old-unknown.txt": "1",
        "d/gone.txt": "1",
        "d/new.txt": "1",
        "d/sub/x.txt": "1",
        "d/skip.log": "1",
        "other/o.txt": "1",
      },
    });
    cleanups.push(ws.cleanup);
    const past = new Date(Date.now() - 60_000);
    for (const f of ["d/same.txt", "d/changed.txt", "d/old-unknown.txt", "d/gone.txt"]) utimesSync(path.join(ws.dir, f), past, past);
    const index = new FileIndex();
    const mtime = (f: string) => statSync(path.join(ws.dir, f)).mtimeMs;
    index.set("d/same.txt", { mtimeMs: mtime("d/same.txt") });
    index.set("d/changed.txt", { mtimeMs: mtime("d/changed.txt") - 1000 });
    index.set("d/old-unknown.txt", {});
    index.set("d/gone.txt", {});
    index.set("other/o.txt", {});
    writeFile(ws.dir, "d/touched-unknown.txt", "1");
    index.set("d/touched-unknown.txt", {});
    rmSync(path.join(ws.dir, "d/gone.txt"));
    const rules = new IgnoreRules();
    rules.addFile("", "*.log\n");

    const events = await rescanFolders(ws.dir, ["d"], Date.now() - 100, index, rules);
    const rel = events.map((e) => [path.relative(ws.dir, e.path), e.kind]).sort();
    expect(rel).toEqual([
      ["d/changed.txt", "update"],
      ["d/gone.txt", "delete"],
      ["d/new.txt", "create"],
      ["d/sub", "create"],
      ["d/touched-unknown.txt", "update"],
    ]);
  });

  it("lists what a checkout changed from git", async () => {
    const ws = tmpWorkspace({ git: true, files: { "a.txt": "1", "b.txt": "1" } });
    cleanups.push(ws.cleanup);
    git(ws.dir, "add", "-A");
    git(ws.dir, "commit", "-qm", "one");
    const one = git(ws.dir, "rev-parse", "HEAD").trim();
    writeFile(ws.dir, "b.txt", "2");
    git(ws.dir, "commit", "-qam", "two");
    const two = git(ws.dir, "rev-parse", "HEAD").trim();
    expect(await gitChangedPaths(gitReader(supervisor, ws.dir), one, two)).toEqual(["b.txt"]);
  });
});
