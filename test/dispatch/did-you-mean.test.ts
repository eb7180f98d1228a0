import { describe, expect, it } from "vitest";
import { nearestToolIds } from "../../src/dispatch/registry.js";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { tmpWorkspace } from "../helpers/tmp.js";

describe("an unknown tool id gets the nearest enabled ids", () => {
  let d: DaemonClient;
  daemonForSuite(tmpWorkspace({ files: { "a.txt": "x\n" } }), (c) => (d = c));

  it("info {tool_id} of a typo: NOT_AVAILABLE with did you mean", async () => {
    const r = await d.call("info", { tool_id: "fil_read" });
    expect(r.result).toMatchObject({ code: "NOT_AVAILABLE", did_you_mean: expect.arrayContaining(["file_read"]) });
    expect(r.result.did_you_mean[0]).toBe("file_read");
    expect(r.result.message).toContain('Did you mean "file_read"');
  });

  it("a call of a typo: NOT_AVAILABLE with did you mean", async () => {
    const r = await d.call("gti_status", {});
    expect(r.result).toMatchObject({ code: "NOT_AVAILABLE" });
    expect(r.result.did_you_mean[0]).toBe("git_status");
    expect(r.result.message).toContain('Did you mean "git_status"');
  });

  it("an id near nothing suggests nothing", async () => {
    const r = await d.call("info", { tool_id: "qqqqqqqq" });
    expect(r.result).toMatchObject({ code: "NOT_AVAILABLE", did_you_mean: [] });
    expect(r.result.message).not.toContain("Did you mean");
  });
});

describe("nearestToolIds", () => {
  const ids = ["file_read", "file_write", "file_delete", "git_status", "git_line_status", "lsp_rename", "list", "info"];

  it("ranks the fewest edits first, then the closest length; a part of an id is near it", () => {
    expect(nearestToolIds("fil_read", ids)[0]).toBe("file_read");
    expect(nearestToolIds("file_wirte", ids)[0]).toBe("file_write");
    expect(nearestToolIds("status", ids)).toEqual(["git_status", "git_line_status"]);
    expect(nearestToolIds("rename", ids)).toEqual(["lsp_rename"]);
    expect(nearestToolIds("FILE_READ", ids)[0]).toBe("file_read");
  });

  it("suggests at most three, and none for an id far from every one", () => {
    expect(nearestToolIds("file", ids).length).toBeLessThanOrEqual(3);
    expect(nearestToolIds("zzzzzz", ids)).toEqual([]);
    expect(nearestToolIds("", ids)).toEqual([]);
  });
});
