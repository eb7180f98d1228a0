import { z } from "zod";
import { defineTool } from "../dispatch/tool.js";

export const cancelTool = defineTool({
  id: "cancel",
  description: "Cancels a call that is still running; it answers CANCELLED and changes nothing it had not finished changing atomically.",
  params: { call_id: z.union([z.number(), z.string()]).describe("The toolcall_id of the call to cancel.") },
  mutating: false,
  async run({ call_id }, { daemon }) {
    const cancelled = daemon.cancel(call_id);
    return {
      cancelled,
      text: cancelled ? `call ${JSON.stringify(call_id)} cancelled` : `call ${JSON.stringify(call_id)} is not running (or is already committing)`,
    };
  },
});
