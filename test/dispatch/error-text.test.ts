import { describe, expect, it } from "vitest";
import { MAX_TEXT_CHARS } from "../../src/core/limits.js";
import { errorText } from "../../src/dispatch/error-text.js";

describe("errorText", () => {
  it("is CODE: message, then the details a model acts on: blocks for multi-line ones, lists and values on a line", () => {
    const text = errorText({
      code: "CONFLICT",
      message: "Cannot finalize yet.",
      problems: ["a.txt:3", "b.txt:9"],
      in_progress: "merge",
      stderr_tail: "line one\nline two\n",
      reason: { code: "HASH_MISMATCH", message: "a.txt changed" },
    });
    expect(text).toBe(
      [
        "CONFLICT: Cannot finalize yet.",
        "problems: a.txt:3, b.txt:9",
        "in_progress: merge",
        "stderr_tail:\nline one\nline two",
        'reason: {"code":"HASH_MISMATCH","message":"a.txt changed"}',
      ].join("\n"),
    );
  });

  it("leaves out what the message already says, empty details, and a passthrough server's content", () => {
    const text = errorText({
      code: "TOOL_ERROR",
      message: 'fail (MCP server "test") failed: no such widget',
      server: "test",
      content: [{ type: "text", text: "no such widget" }],
      did_you_mean: [],
      last_garbage: null,
    });
    expect(text).toBe('TOOL_ERROR: fail (MCP server "test") failed: no such widget');
  });

  it("shows a nested result by its text (PREVIEW_STALE's new preview)", () => {
    const text = errorText({ code: "PREVIEW_STALE", message: "The state changed.", preview: { dry_run: true, text: "would write a.txt\n+x\n" } });
    expect(text).toBe("PREVIEW_STALE: The state changed.\npreview:\nwould write a.txt\n+x");
  });

  it("is cut at MAX_TEXT_CHARS with a note", () => {
    const text = errorText({ code: "HASH_MISMATCH", message: "changed", diff: `${"+x\n".repeat(MAX_TEXT_CHARS)}` });
    expect(text.length).toBeLessThan(MAX_TEXT_CHARS + 200);
    expect(text).toMatch(/\[cut at 100000 characters; the details are in the result's fields\]$/);
  });
});
