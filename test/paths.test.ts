import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PathResolver } from "../src/paths.js";
import { tmpWorkspace } from "./helpers/tmp.js";

/** The MCP filesystem server's path advisories, as test cases for the one resolver every tool uses. */
describe("PathResolver", () => {
  let ws: ReturnType<typeof tmpWorkspace>;
  let sibling: string;
  let paths: PathResolver;

  beforeAll(() => {
    ws = tmpWorkspace({ git: true, files: { "src/a.ts": "a\n", "docs/readme.md": "r\n", "..notes.txt": "n\n" } });
    sibling = `${ws.dir}-backup`;
    mkdirSync(sibling);
    writeFileSync(path.join(sibling, "secret.txt"), "s\n");
    symlinkSync(path.join(sibling, "secret.txt"), path.join(ws.dir, "escape.txt"));
    symlinkSync(sibling, path.join(ws.dir, "escape-dir"));
    symlinkSync(path.join(ws.dir, "src/a.ts"), path.join(ws.dir, "inner-link.ts"));
    symlinkSync(path.join(ws.dir, ".git"), path.join(ws.dir, "gitlink"));
    paths = new PathResolver(ws.dir);
  });
  afterAll(() => {
    ws.cleanup();
    rmSync(sibling, { recursive: true, force: true });
  });

  const code = async (input: string) =>
    paths.resolve(input).then(
      () => "OK",
      (e) => e.code,
    );

  it("resolves relative and absolute paths inside the root", async () => {
    expect(await paths.resolve("src/a.ts")).toMatchObject({ rel: "src/a.ts", realRel: "src/a.ts", exists: true });
    expect(await paths.resolve(path.join(ws.dir, "src/a.ts"))).toMatchObject({ rel: "src/a.ts", exists: true });
    expect(await paths.resolve("./src/../src/a.ts")).toMatchObject({ rel: "src/a.ts" });
  });

  it("resolves a name that only starts with two dots: .. as a whole component is what leads out", async () => {
    expect(await paths.resolve("..notes.txt")).toMatchObject({ rel: "..notes.txt", realRel: "..notes.txt", exists: true });
    expect(await paths.resolve("src/...")).toMatchObject({ rel: "src/...", exists: false });
    expect(await code("..")).toBe("PATH_OUTSIDE_ROOT");
  });

  it("refuses a sibling that shares the root's prefix", async () => {
    expect(await code(path.join(sibling, "secret.txt"))).toBe("PATH_OUTSIDE_ROOT");
    expect(await code(`../${path.basename(sibling)}/secret.txt`)).toBe("PATH_OUTSIDE_ROOT");
  });

  it("refuses .. traversal and absolute paths outside", async () => {
    expect(await code("../../etc/passwd")).toBe("PATH_OUTSIDE_ROOT");
    expect(await code("src/../../x")).toBe("PATH_OUTSIDE_ROOT");
    expect(await code("/etc/passwd")).toBe("PATH_OUTSIDE_ROOT");
  });

  it("refuses symlinks whose real path leaves the root, also for files to be created under them", async () => {
    expect(await code("escape.txt")).toBe("PATH_OUTSIDE_ROOT");
    expect(await code("escape-dir/secret.txt")).toBe("PATH_OUTSIDE_ROOT");
    expect(await code("escape-dir/new/file.txt")).toBe("PATH_OUTSIDE_ROOT");
  });

  it("follows a symlink that stays inside: abs is the link, real its target", async () => {
    const r = await paths.resolve("inner-link.ts");
    expect(r.abs).toBe(path.join(ws.dir, "inner-link.ts"));
    expect(r.real).toBe(path.join(ws.dir, "src/a.ts"));
    expect(r.realRel).toBe("src/a.ts");
    expect(r.rel).toBe("inner-link.ts");
  });

  it("checks a file that does not exist yet through its nearest existing parent", async () => {
    expect(await paths.resolve("new/deep/file.ts")).toMatchObject({ rel: "new/deep/file.ts", exists: false, real: path.join(ws.dir, "new/deep/file.ts") });
  });

  it("refuses a NUL byte as INVALID_PARAMS", async () => {
    expect(await code("src/a.ts\0.png")).toBe("INVALID_PARAMS");
  });

  it("forbids .git/ to the file tools, also through a symlink, and allows it to the git tools", async () => {
    expect(await code(".git/config")).toBe("PATH_FORBIDDEN");
    expect(await code(".git")).toBe("PATH_FORBIDDEN");
    expect(await code("src/../.git/HEAD")).toBe("PATH_FORBIDDEN");
    expect(await code("gitlink/config")).toBe("PATH_FORBIDDEN");
    expect(await paths.resolve(".git/config", { allowGitDir: true })).toMatchObject({ rel: ".git/config", exists: true });
    expect(await code("sub/.git/config")).toBe("PATH_FORBIDDEN");
    expect(await code("a/b/.git")).toBe("PATH_FORBIDDEN");
    expect(await code("a/.git/b/c")).toBe("PATH_FORBIDDEN");
    expect(await paths.resolve("sub/.git/config", { allowGitDir: true })).toMatchObject({ rel: "sub/.git/config" });
    expect(await code("a.git/b")).toBe("OK");
    expect(await code("a/.gitx/b")).toBe("OK");
    expect(await code(".github/workflows/x.yml")).toBe("OK");
    expect(await code(".gitignore")).toBe("OK");
  });

  it("names the path root-relatively in OS errors: a symlink loop, a name too long", async () => {
    symlinkSync("loop-b", path.join(ws.dir, "loop-a"));
    symlinkSync("loop-a", path.join(ws.dir, "loop-b"));
    const loop = await paths.resolve("loop-a/x.txt").catch((e) => e);
    expect(loop).toMatchObject({ code: "SYMLINK_LOOP" });
    expect(loop.message).toMatch(/^loop-a\/x\.txt: /);
    expect(loop.message).not.toContain(ws.dir);
    const long = await paths.resolve(`${"n".repeat(300)}.txt`).catch((e) => e);
    expect(long).toMatchObject({ code: "NAME_TOO_LONG" });
    expect(long.message).not.toContain(ws.dir);
  });

  it("gives the entry a path names itself: a link is the link, a file under a linked folder is in the real folder", async () => {
    symlinkSync(path.join(ws.dir, "src"), path.join(ws.dir, "src-link"));
    expect(paths.entryOf(await paths.resolve("inner-link.ts"))).toEqual({ dir: ws.dir, name: "inner-link.ts" });
    expect(paths.entryOf(await paths.resolve("src-link/a.ts"))).toEqual({ dir: path.join(ws.dir, "src"), name: "a.ts" });
  });

  it("refuses a root that is not a directory", () => {
    expect(() => new PathResolver(path.join(ws.dir, "src/a.ts"))).toThrow(/not a directory/);
  });
});
