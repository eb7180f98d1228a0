import { defineTool } from "../dispatch/tool.js";

export const sessionEndTool = defineTool({
  id: "session_end",
  description:
    "Ends the calling session: the daemon forgets which file versions it saw, so it is no longer listed in stale_sessions. A session idle for an hour is forgotten too.",
  params: {},
  mutating: false,
  async run(_params, { ws, sessionId }) {
    const files = ws.views.forgetSession(sessionId);
    return { session: sessionId, forgotten_files: files, text: `session ${sessionId} ended; ${files} file views forgotten` };
  },
});
