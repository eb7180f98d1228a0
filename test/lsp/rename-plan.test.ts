import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_PLANS, PLAN_TTL_MS, type RenamePlan, RenamePlans, planRename } from "../../src/lsp/rename-plan.js";
import { hiddenInSandbox } from "../../src/lsp/sandbox.js";
import { toolErrorFrom } from "../helpers/tool-error.js";

const edit = (line: number, from: number, to: number, newText: string) => ({
  range: { start: { line, character: from }, end: { line, character: to } },
  newText,
});
const ASKED = { path: "a.ts", hash: "h-a", at: { line: 1, symbol: "add" }, newName: "plus" };

describe("planRename", () => {
  it("applies each file's edits to the content of the hash they were computed against", () => {
    const texts: Record<string, { text: string; hash: string }> = {
      "a.ts": { text: "export const add = 1;\n", hash: "h-a" },
      "b.ts": { text: "import { add } from './a';\nadd;\n", hash: "h-b" },
    };
    const plan = planRename(
      ASKED,
      [
        { path: "a.ts", hash: "h-a", edits: [edit(0, 13, 16, "plus")] },
        { path: "b.ts", hash: null, edits: [edit(0, 9, 12, "plus"), edit(1, 0, 3, "plus")] },
      ],
      (p, hash) => (hash === null || texts[p].hash === hash ? texts[p] : undefined),
    );
    expect(plan.count).toBe(3);
    expect(plan.files.map((f) => [f.path, f.hash, f.after, f.edits])).toEqual([
      ["a.ts", "h-a", "export const plus = 1;\n", 1],
      ["b.ts", "h-b", "import { plus } from './a';\nplus;\n", 2],
    ]);
    expect(plan.files[0].diff).toContain("-export const add = 1;\n+export const plus = 1;");
  });

  it("refuses a file outside the workspace, and one whose content is no longer to be had", () => {
    const outside = toolErrorFrom(() => planRename(ASKED, [{ path: "/usr/lib/x.d.ts", hash: null, edits: [] }], () => ({ text: "", hash: "h" })));
    expect(outside).toMatchObject({ code: "PATH_OUTSIDE_ROOT", details: { path: "/usr/lib/x.d.ts" } });
    const changed = toolErrorFrom(() => planRename(ASKED, [{ path: "a.ts", hash: "h-old", edits: [] }], () => undefined));
    expect(changed).toMatchObject({ code: "HASH_MISMATCH", details: { path: "a.ts" } });
  });
});

describe("RenamePlans", () => {
  afterEach(() => vi.useRealTimers());
  const plan = (n: number): RenamePlan => ({ ...ASKED, hash: `h${n}`, files: [], count: n });

  it("gives a preview's plan once, to the same session and call only", () => {
    const plans = new RenamePlans();
    const key = RenamePlans.key("s1", { path: "a.ts", line: 1, symbol: "add", new_name: "plus" });
    plans.put(key, plan(1));
    expect(plans.take(RenamePlans.key("s2", { path: "a.ts", line: 1, symbol: "add", new_name: "plus" }))).toBeUndefined();
    expect(plans.take(RenamePlans.key("s1", { path: "a.ts", line: 1, symbol: "add", new_name: "other" }))).toBeUndefined();
    // The same params in another key order are the same call.
    expect(plans.take(RenamePlans.key("s1", { new_name: "plus", symbol: "add", line: 1, path: "a.ts" }))).toEqual(plan(1));
    expect(plans.take(key)).toBeUndefined();
  });

  it("forgets a plan older than its time to live, and the least recently made beyond the bound", () => {
    vi.useFakeTimers();
    const plans = new RenamePlans();
    plans.put("old", plan(0));
    vi.advanceTimersByTime(PLAN_TTL_MS + 1);
    expect(plans.take("old")).toBeUndefined();
    for (let i = 0; i <= MAX_PLANS; i++) plans.put(`k${i}`, plan(i));
    plans.put("k1", plan(1)); // made again: the most recent now
    plans.put("one more", plan(99));
    expect(plans.take("k0")).toBeUndefined();
    expect(plans.take("k2")).toBeUndefined();
    expect(plans.take("k1")).toEqual(plan(1));
    expect(plans.take(`k${MAX_PLANS}`)).toEqual(plan(MAX_PLANS));
  });
});

describe("what a sandboxed server cannot see", () => {
  const opts = { root: "/tmp/ws", keep: ["/opt/tool-layer/node_modules"], hidden: ["/run"] };

  it("the private /tmp and the hidden folders, except the root and the kept paths bound again", () => {
    expect(hiddenInSandbox(opts, "/tmp/elsewhere/decl.ts")).toBe(true);
    expect(hiddenInSandbox(opts, "/run/user/1000/x.ts")).toBe(true);
    expect(hiddenInSandbox(opts, "/tmp/ws/src/a.ts")).toBe(false);
    expect(hiddenInSandbox(opts, "/tmp/wsx/a.ts")).toBe(true); // a sibling with the root's name as a prefix is not in it
    expect(hiddenInSandbox(opts, "/home/u/lib/decl.ts")).toBe(false);
    expect(hiddenInSandbox({ ...opts, root: "/home/u/ws" }, "/tmp")).toBe(true);
  });
});
