import { z } from "zod";
import { defineTool } from "./tool.js";

/**
 * Enabled only with TOOL_LAYER_DEBUG_TOOLS=1 (never in tools.json): a call whose duration and failure the tests control,
 * so the dispatcher's cancel, timeout, duplicate-id and INTERNAL paths are tested without depending on a slow real tool.
 */
export const debugSleepTool = defineTool({
  id: "debug_sleep",
  description: "Waits `ms` milliseconds, then answers; for testing the dispatcher.",
  params: {
    ms: z.number().int().min(0).max(60_000).describe("How long to wait."),
    crash: z.boolean().optional().describe("Throw an unexpected error instead of answering."),
  },
  mutating: false,
  timeoutMs: 2_000,
  async run({ ms, crash }, { signal }) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
    if (crash) throw new TypeError("debug_sleep crashed on purpose");
    return { slept: ms, text: `slept ${ms} ms` };
  },
});
