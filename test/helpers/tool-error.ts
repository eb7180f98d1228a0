import { ToolError } from "../../src/errors.js";

/** The ToolError `fn` throws, to check its code, message and details; anything else thrown, or nothing, fails the test. */
export function toolErrorFrom(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ToolError) return e;
    throw e;
  }
  throw new Error("expected a ToolError");
}
