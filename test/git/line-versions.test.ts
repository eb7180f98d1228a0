import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initHash } from "../../src/core/hash.js";
import { EventBus } from "../../src/platform/bus.js";
import { Supervisor } from "../../src/platform/supervisor.js";
import { Workspace } from "../../src/workspace.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { commitFile, git, writeFile } from "./fixture.js";

/** A file's versions as the line tools read them (line-versions.ts), on a real workspace and repository. */
describe("a file's versions", () => {
  const tmp = tmpWorkspace({ git: true });
  const processes = new Supervisor();
  let ws: Workspace;

  beforeAll(async () => {
    await initHash();
    ws = new Workspace({ root: tmp.dir }, processes, new EventBus(), () => undefined);
  });
  afterAll(async () => {
    await ws.dispose();
    await processes.stop();
    tmp.cleanup();
  });

  it("an index at HEAD's blob is HEAD's lines themselves from the first read, so one diff serves both", async () => {
    const svc = ws.git;
    commitFile(tmp.dir, "v.txt", "one\ntwo\nthree\n");
    writeFile(tmp.dir, "v.txt", "one\nTWO\nthree\n");
    const file = await svc.lines.load({ repo: svc }, "v.txt");
    expect(file.index.sha).toBe(file.head.sha);
    expect(file.versions.index).toBe(file.versions.head);
    expect(file.versions.indexToWorktree).toBe(file.versions.headToWorktree);

    // Staged by git: two blobs, two versions.
    git(tmp.dir, "add", "v.txt");
    writeFile(tmp.dir, "v.txt", "ONE\nTWO\nthree\n");
    const staged = await svc.lines.load({ repo: svc }, "v.txt");
    expect(staged.versions.index).not.toBe(staged.versions.head);
    expect(staged.versions.index.lines).toEqual(["one", "TWO", "three"]);
  });
});
