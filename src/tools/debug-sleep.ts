import { z } from "zod";
import { defineTool } from "../dispatch/tool.js";

/**
 * Enabled only with TOOL_LAYER_DEBUG_TOOLS=1 (never in tools.json): a call whose duration and failure the tests control,
 * so the dispatcher's cancel, timeout, duplicate-id and INTERNAL paths are tested without depending on a slow real tool
 * (`pooled`: the same wait in a child process, which queues for a pool slot).
 */
export const debugSleepTool = defineTool({
  id: "debug_sleep",
  description: "Waits `ms` milliseconds, then answers; for testing the dispatcher.",
  params: {
    ms: z.number().int().min(0).max(60_000).describe("How long to wait."),
    crash: z.boolean().optional().describe("Throw an unexpected error instead of answering."),
    pooled: z.boolean().optional().describe("Wait in a `sleep` child started through the supervisor's pool, so the call queues for a slot as git and rg do."),
  },
  mutating: false,
  timeoutMs: 2_000,
  async run({ ms, crash, pooled }, { signal, ws }) {
    if (pooled) await ws.processes.run({ cmd: "sleep", args: [String(ms / 1000)], cwd: ws.root, group: false, label: "sleep" }, { signal });
    else await sleep(ms, signal);
    if (crash) throw new TypeError("debug_sleep crashed on purpose");
    return { slept: ms, text: `slept ${ms} ms` };
  },
});

/** Resolves after `ms`, or at once when the call is aborted (the dispatcher answers for it then). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}
