import { closeSync, openSync, rmSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { findGitDirs } from "../../src/terminal/git-dirs.js";
import { UnwatchedSnapshot, type Watched, filesPerFolder, startStamp } from "../../src/terminal/ignored-changes.js";
import { tmpWorkspace, writeFile } from "../helpers/tmp.js";

let ws: ReturnType<typeof tmpWorkspace>;
beforeEach(() => {
  ws = tmpWorkspace({ files: { "src/a.ts": "a\n", "src/b.ts": "b\n", "x.log": "1\n", "out/old.js": "1\n", "out/deep/keep.js": "1\n" } });
  for (let i = 0; i < 12; i++) writeFile(ws.dir, `big/f${i}.js`, "1\n");
});
afterEach(() => ws.cleanup());

/** The index as the VFS would have it: the files under src/ (everything else is ignored). */
function watched(files: string[]): Watched {
  const set = new Set(files);
  return { has: (rel) => set.has(rel), folders: filesPerFolder(files) };
}

/** A snapshot taken by the git-dir walk, and the stamp a launch takes just after it (the command's start). */
async function snapshotAtStart(budget?: number): Promise<{ snap: UnwatchedSnapshot; since: number }> {
  const snap = new UnwatchedSnapshot(ws.dir, watched(["src/a.ts", "src/b.ts"]), budget);
  await findGitDirs(ws.dir, { visit: snap.visit });
  const fd = openSync(`${ws.dir}.start`, "w");
  try {
    return { snap, since: startStamp(fd) };
  } finally {
    closeSync(fd);
    rmSync(`${ws.dir}.start`);
  }
}

test("the folders of files: each once with the files it holds itself, every folder above them and the root too", () => {
  expect(Object.fromEntries(filesPerFolder(["a.txt", "src/x/y.ts", "src/x/z.ts", "src/w.ts", "lib/q/r.ts"]))).toEqual({
    "": 1,
    src: 1,
    "src/x": 2,
    lib: 0,
    "lib/q": 1,
  });
  expect(Object.fromEntries(filesPerFolder([]))).toEqual({ "": 0 });
});

describe("UnwatchedSnapshot", () => {
  test("created, modified and deleted files in ignored folders, ignored files and new folders; watched files not", async () => {
    const { snap, since } = await snapshotAtStart();
    writeFile(ws.dir, "x.log", "2\n");
    writeFile(ws.dir, "out/deep/keep.js", "2\n");
    rmSync(path.join(ws.dir, "out/old.js"));
    writeFile(ws.dir, "out/new.js", "n\n");
    writeFile(ws.dir, "dist/x/y.js", "n\n");
    writeFile(ws.dir, "src/c.ts", "watched\n");
    writeFile(ws.dir, "src/c.ts.map", "ignored\n");
    const after = watched(["src/a.ts", "src/b.ts", "src/c.ts"]);
    expect(snap.changesSince(since, after)).toEqual({ count: 6, created: 3, modified: 2, deleted: 1 });
  });

  test("nothing changed is nothing counted", async () => {
    const { snap, since } = await snapshotAtStart();
    expect(snap.changesSince(since, watched(["src/a.ts", "src/b.ts"]))).toEqual({ count: 0, created: 0, modified: 0, deleted: 0 });
  });

  test("past the budget the biggest places are named, not counted; the smaller ones still are", async () => {
    const { snap, since } = await snapshotAtStart(8);
    writeFile(ws.dir, "big/f0.js", "2\n");
    writeFile(ws.dir, "out/old.js", "2\n");
    expect(snap.changesSince(since, watched(["src/a.ts", "src/b.ts"]))).toEqual({ count: 1, created: 0, modified: 1, deleted: 0, not_counted: ["big/"] });
  });
});
