import { rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace, writeFile } from "../helpers/tmp.js";

/** find_file through the built daemon, served from the VFS's live index of the workspace. */
describe("find_file", () => {
  const ws = tmpWorkspace({
    git: true,
    files: {
      ".gitignore": "build/\n*.log\n",
      "src/user/UserService.ts": "",
      "src/user/services/config.ts": "",
      "src/user/UserModel.ts": "",
      "src/order/OrderService.ts": "",
      "test/user/UserService.test.ts": "",
      "docs/user-guide.md": "",
      "docs/invoice.md": "",
      "notes/invoiec-format.txt": "",
      "build/UserService.js": "",
      "debug.log": "",
      "README.md": "",
      "src/user/.UserModel.ts.tl-0123456789ab.tmp": "a temp file a killed write left behind",
      "src/tools/file-write.ts": "",
      "src/dispatch/dispatcher.ts": "",
      "test/compile-off-by-default.test.txt": "",
      [`deep/${"a".repeat(40)}`]: "",
    },
  });
  let d: DaemonClient;
  daemonForSuite(ws, (c) => (d = c));

  it("leaves out the temp files of file writes", async () => {
    expect((await d.ok("find_file", { glob: "**/*.tmp" })).paths).toEqual([]);
    expect((await d.ok("find_file", { query: "UserModel" })).paths).toEqual(["src/user/UserModel.ts"]);
  });

  it("ranks an abbreviation's file first, one path per line", async () => {
    const r = await d.ok("find_file", { query: "usrsvc" });
    expect(r.paths[0]).toBe("src/user/UserService.ts");
    expect(r.text.split("\n")).toEqual(r.paths);
    expect(r.total).toBe(r.paths.length);
    expect(r.truncated).toBe(false);
  });

  it("puts files whose name contains the query first, then path fragments", async () => {
    const r = await d.ok("find_file", { query: "service" });
    expect(r.paths.slice(0, 3)).toEqual(["src/user/UserService.ts", "src/order/OrderService.ts", "test/user/UserService.test.ts"]);
    expect(r.paths[3]).toBe("src/user/services/config.ts");
    expect((await d.ok("find_file", { query: "order/Ord" })).paths[0]).toBe("src/order/OrderService.ts");
  });

  it("never shows gitignored files", async () => {
    const r = await d.ok("find_file", { query: "UserService", limit: 100 });
    expect(r.paths).not.toContain("build/UserService.js");
    expect((await d.ok("find_file", { query: "debug" })).paths).toEqual([]);
  });

  it("limits, and restricts to a folder", async () => {
    const r = await d.ok("find_file", { query: "s", limit: 2 });
    expect(r.paths).toHaveLength(2);
    expect(r.truncated).toBe(true);
    expect(r.total).toBeGreaterThan(2);
    const inTest = await d.ok("find_file", { query: "user", path: "test" });
    expect(inTest.paths).toEqual(["test/user/UserService.test.ts"]);
  });

  it("lists the paths matching a glob, sorted, and combines a glob with a query", async () => {
    expect((await d.ok("find_file", { glob: "*.ts" })).paths).toEqual([
      "src/dispatch/dispatcher.ts",
      "src/order/OrderService.ts",
      "src/tools/file-write.ts",
      "src/user/UserModel.ts",
      "src/user/UserService.ts",
      "src/user/services/config.ts",
      "test/user/UserService.test.ts",
    ]);
    expect((await d.ok("find_file", { glob: "src/user/*" })).paths).toEqual(["src/user/UserModel.ts", "src/user/UserService.ts"]);
    expect((await d.ok("find_file", { query: "user", glob: "*.md" })).paths).toEqual(["docs/user-guide.md"]);
    // as rg's -g: "!" excludes, a folder it matches with all inside
    const outside = (await d.ok("find_file", { glob: "!{src,test}", limit: 1000 })).paths;
    expect(outside).toContain("README.md");
    expect(outside.filter((p: string) => p.startsWith("src/") || p.startsWith("test/"))).toEqual([]);
    const none = await d.ok("find_file", { query: "zzzqqq" });
    expect(none).toMatchObject({ paths: [], total: 0, text: "No matching files." });
  });

  it("sees files created and deleted while it runs", async () => {
    const created = d.waitFor(
      (l) => l.event === "fs.changed" && l.data.changes.some((c: any) => c.path === "src/order/PaymentGateway.ts" && c.kind === "created"),
    );
    writeFile(ws.dir, "src/order/PaymentGateway.ts", "export {};\n");
    await created;
    expect((await d.ok("find_file", { query: "paygw" })).paths[0]).toBe("src/order/PaymentGateway.ts");
    const deleted = d.waitFor(
      (l) => l.event === "fs.changed" && l.data.changes.some((c: any) => c.path === "src/order/PaymentGateway.ts" && c.kind === "deleted"),
    );
    rmSync(path.join(ws.dir, "src/order/PaymentGateway.ts"));
    await deleted;
    expect((await d.ok("find_file", { query: "paygw" })).paths).not.toContain("src/order/PaymentGateway.ts");
  });

  it("refuses a call with neither query nor glob, a path outside the root or missing, and a bad limit", async () => {
    const none = await d.call("find_file", {});
    expect(none.result.code).toBe("INVALID_PARAMS");
    expect(none.result.message).toMatch(/query or glob is required/);
    expect((await d.call("find_file", { query: "  " })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("find_file", { query: "a", path: "../x" })).result.code).toBe("PATH_OUTSIDE_ROOT");
    expect((await d.call("find_file", { query: "a", path: "nope" })).result.code).toBe("NOT_FOUND");
    expect((await d.call("find_file", { query: "a", limit: 0 })).result.code).toBe("INVALID_PARAMS");
    expect((await d.call("find_file", { query: "a", limt: 3 })).result.message).toMatch(/limt: unknown field/);
  });

  it("answers the glob that froze the event loop, and a list sent right after it", async () => {
    const glob = "**a**a**a**a**a**a**a**a**a**a**a**a**b";
    const [found, list] = await Promise.all([d.call("find_file", { glob }), d.call("list")]);
    expect(found.result).toMatchObject({ paths: [], total: 0 });
    expect(list.success).toBe(true);
    expect((await d.ok("find_file", { glob: "**a**a**a**a**a**a**a**a**a**a**a**a**" })).paths).toEqual([`deep/${"a".repeat(40)}`]);
  });

  it("refuses an invalid glob as INVALID_PARAMS, in rg's words, as search does", async () => {
    for (const [glob, words] of [
      ["[z-a]", /invalid range; 'z' > 'a'/],
      ["[oops", /unclosed character class/],
      ["*.{ts", /unclosed alternate group/],
    ] as const) {
      const r = await d.call("find_file", { glob });
      expect(r.result.code).toBe("INVALID_PARAMS");
      expect(r.result.message).toMatch(new RegExp(`^glob: error parsing glob .*${words.source}.*Fix the glob`));
      const viaSearch = await d.call("search", { pattern: "x", glob: [glob] });
      expect(viaSearch.result.code).toBe("INVALID_PARAMS");
    }
    expect((await d.call("find_file", { glob: "*".repeat(1001) })).result.code).toBe("INVALID_PARAMS");
  });

  it("treats _ - . and space alike, and finds a name one letter off below exact matches, saying so", async () => {
    expect((await d.ok("find_file", { query: "file_write" })).paths[0]).toBe("src/tools/file-write.ts");
    expect((await d.ok("find_file", { query: "file write" })).paths[0]).toBe("src/tools/file-write.ts");
    expect((await d.ok("find_file", { query: "user.service" })).paths[0]).toBe("src/user/UserService.ts");
    for (const typo of ["fiel_write", "file-wirte.ts", "dispatcehr", "UserSrevice"]) {
      const r = await d.ok("find_file", { query: typo });
      const want = typo.startsWith("fi") ? "src/tools/file-write.ts" : typo.startsWith("d") ? "src/dispatch/dispatcher.ts" : "src/user/UserService.ts";
      expect(r.paths[0], typo).toBe(want);
      expect(r.approximate, typo).toContain(want);
    }
    expect((await d.ok("find_file", { query: "dispatcehr" })).text).toBe(
      'src/dispatch/dispatcher.ts\n\n(No exact match for "dispatcehr"; the path above is close to it, a typo?)',
    );
    expect((await d.ok("find_file", { query: "UserSrevice" })).text).toBe(
      'src/user/UserService.ts\ntest/user/UserService.test.ts\n\n(No exact match for "UserSrevice"; the paths above are close to it, a typo?)',
    );
    expect((await d.ok("find_file", { query: "invoiec" })).text).toBe(
      'notes/invoiec-format.txt\ndocs/invoice.md\n\n(Close to "invoiec" but not exact, a typo?: docs/invoice.md.)',
    );
    // a name that holds the query only scattered once a letter is dropped is no typo of it
    expect((await d.ok("find_file", { query: "globls" })).text).toBe("No matching files.");
    // an exact match first: the typo fallback comes only when exact matches are few, and then after them
    const exact = await d.ok("find_file", { query: "dispacher" });
    expect(exact.paths[0]).toBe("src/dispatch/dispatcher.ts");
    expect(exact.approximate).toBeUndefined();
    expect(exact.text.split("\n")).toEqual(exact.paths);
  });

  it("says in info whether the index is ready", async () => {
    const info = await d.ok("info", { tool_id: "find_file" });
    expect(info.state.file_index).toMatch(/^ready, \d+ paths$/);
  });
});
