import { z } from "zod";
import { ToolError } from "../errors.js";
import { readPage } from "../terminal/output-store.js";
import { defineTool } from "../dispatch/tool.js";

export const terminalOutputTool = defineTool({
  id: "terminal_output",
  description:
    "Returns a background job's output from byte offset `since` (default 0), up to about 30,000 characters, escapes removed, with `next`, the offset to pass as `since` for what follows; for callers that do not read terminal.output events.",
  params: {
    job: z.string().min(1).describe('The job id terminal_run gave, e.g. "job-1".'),
    since: z.number().int().min(0).optional().describe("Byte offset into the job's output to start from: 0, or the `next` of the previous call or event."),
  },
  mutating: false,
  async run({ job: id, since = 0 }, ctx) {
    const terminal = ctx.services.terminal;
    const job = terminal.job(id);
    if (!terminal.store.kept(job.file)) throw new ToolError("NOT_FOUND", `The output of ${id} is no longer kept (only the newest output files are).`);
    const page = await readPage(job.file, since);
    const more = page.next < page.size;
    const footer = `[${id} ${job.status()} · bytes ${since}-${page.next} of ${page.size}${more ? ` · more: call again with since ${page.next}` : ""}]`;
    const text = `${page.data.replace(/\n$/, "")}${page.data ? "\n" : ""}${footer}`;
    return { ...job.info(), since, next: page.next, size: page.size, more, data: page.data, text };
  },
});
