import { mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApprovalStore, approvalsFile, defaultStateDir } from "../../src/mcp/approvals.js";
import { parseMcpConfig } from "../../src/mcp/config.js";
import { tmpWorkspace } from "../helpers/tmp.js";

describe("ApprovalStore", () => {
  let state: ReturnType<typeof tmpWorkspace>;
  let file: string;
  let store: ApprovalStore;

  beforeEach(() => {
    state = tmpWorkspace();
    file = approvalsFile(path.join(state.dir, "tool-layer"), "/work/repo");
    store = new ApprovalStore(file, "/work/repo");
  });
  afterEach(() => state.cleanup());

  const digestOf = (entry: unknown) =>
    parseMcpConfig(JSON.stringify({ mcpServers: { s: entry } }), { source: "workspace", file: null, root: "/work/repo", env: {} }).servers[0].digest;

  it("a file that has come to lie in the workspace (its folder a link into it) approves nothing and is not written", async () => {
    const ws = tmpWorkspace();
    try {
      const d = digestOf({ command: "srv" });
      const shipped = path.join(ws.dir, "shipped");
      mkdirSync(shipped);
      writeFileSync(path.join(shipped, "mcp-approvals.json"), JSON.stringify({ root: ws.dir, servers: { s: { digest: d, approved_at: "" } } }));
      const linked = path.join(state.dir, "roots", "key");
      mkdirSync(path.dirname(linked), { recursive: true });
      symlinkSync(shipped, linked);
      const inside = new ApprovalStore(path.join(linked, "mcp-approvals.json"), ws.dir);
      expect(await inside.isApproved("s", d)).toBe(false);
      expect(await inside.list()).toEqual({});
      await expect(inside.approve("t", d)).rejects.toThrow(/inside the workspace/);
      expect(JSON.parse(readFileSync(path.join(shipped, "mcp-approvals.json"), "utf8")).servers).not.toHaveProperty("t");
    } finally {
      ws.cleanup();
    }
  });

  it("nothing is approved until approved; then exactly that entry is", async () => {
    const d = digestOf({ command: "srv", args: ["--safe"] });
    expect(await store.isApproved("s", d)).toBe(false);
    await store.approve("s", d);
    expect(await store.isApproved("s", d)).toBe(true);
    expect(await store.isApproved("other", d)).toBe(false);
  });

  it("a changed entry (another digest) is not approved, and the other servers stay approved", async () => {
    const a = digestOf({ command: "srv", args: ["--safe"] });
    const b = digestOf({ command: "other" });
    await store.approve("s", a);
    await store.approve("t", b);
    const changed = digestOf({ command: "srv", args: ["--safe", "--also-rm-rf"] });
    expect(await store.isApproved("s", changed)).toBe(false);
    expect(await store.isApproved("t", b)).toBe(true);
  });

  it("revoke withdraws one server and says whether it had an approval", async () => {
    await store.approve("s", "d1");
    await store.approve("t", "d2");
    expect(await store.revoke("s")).toBe(true);
    expect(await store.revoke("s")).toBe(false);
    expect(await store.isApproved("s", "d1")).toBe(false);
    expect(await store.isApproved("t", "d2")).toBe(true);
  });

  it("is stored outside the workspace, in one private file per root, written whole (no temp file left)", async () => {
    await Promise.all([store.approve("a", "1"), store.approve("b", "2"), store.approve("c", "3")]);
    const json = JSON.parse(readFileSync(file, "utf8"));
    expect(json).toMatchObject({ root: "/work/repo", servers: { a: { digest: "1" }, b: { digest: "2" }, c: { digest: "3" } } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(readdirSync(path.dirname(file))).toEqual(["mcp-approvals.json"]);
    expect(approvalsFile("/s", "/work/repo")).not.toBe(approvalsFile("/s", "/work/repo2"));
  });

  it("a second store on the same file (another daemon) sees approvals at once", async () => {
    const other = new ApprovalStore(file, "/work/repo");
    await store.approve("s", "d");
    expect(await other.isApproved("s", "d")).toBe(true);
    await other.revoke("s");
    expect(await store.isApproved("s", "d")).toBe(false);
  });

  it("a damaged file approves nothing and is replaced on the next approval", async () => {
    await store.approve("s", "d");
    writeFileSync(file, "{ not json");
    expect(await store.isApproved("s", "d")).toBe(false);
    await store.approve("t", "e");
    expect(await store.list()).toEqual({ t: { digest: "e", approved_at: expect.any(String) } });
  });

  it("the state folder follows XDG_STATE_HOME, else ~/.local/state", () => {
    expect(defaultStateDir({ XDG_STATE_HOME: "/xdg" })).toBe("/xdg/tool-layer");
    expect(defaultStateDir({ XDG_STATE_HOME: "relative" }).endsWith("/.local/state/tool-layer")).toBe(true);
    expect(defaultStateDir({}).endsWith("/.local/state/tool-layer")).toBe(true);
  });
});
