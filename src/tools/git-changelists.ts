import { listOfPiece } from "../core/changelist-marks.js";
import { allPieces } from "../core/line-pairs.js";
import { sweep } from "../git/line-sweep.js";
import { defineTool } from "../dispatch/tool.js";
import { gitStep, lineToolState } from "./git-step.js";

interface ListFile {
  path: string;
  lines: number;
  deletions: number;
  ranges: number[];
  whole_file?: string;
}

export const gitChangelistsTool = defineTool({
  id: "git_changelists",
  description:
    "Lists every changelist: its name, whether it is the active one (new changes join it), and per file how many changed lines and pure deletions it holds and in which ranges. There is always a list named default.",
  params: {},
  mutating: false,
  state: lineToolState,
  async run(_params, call) {
    const ctx = gitStep(call);
    const svc = ctx.repo;
    const lists = svc.changelists;
    const found = await sweep(ctx);
    const byList = new Map<string, ListFile[]>(lists.names().map((n) => [n, []]));
    for (const { file, marks } of found.files) {
      const per = new Map<string, ListFile>();
      for (const p of allPieces(file.versions.headToWorktree)) {
        const list = listOfPiece(marks, p) ?? lists.active;
        let f = per.get(list);
        if (!f) per.set(list, (f = { path: file.rel, lines: 0, deletions: 0, ranges: [] }));
        if (p.newStart < p.newEnd) f.lines++;
        else f.deletions++;
        if (f.ranges[f.ranges.length - 1] !== p.rangeId) f.ranges.push(p.rangeId);
      }
      for (const [list, f] of per) byList.get(list)?.push(f);
    }
    // A change that is not lines (a binary file, an unmerged one) is one whole-file change, in the active list.
    for (const s of found.skipped) byList.get(lists.active)!.push({ path: s.path, lines: 0, deletions: 0, ranges: [], whole_file: s.code });
    const out = lists
      .names()
      .map((name) => ({ name, active: name === lists.active, files: byList.get(name)!.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)) }));
    const text = out
      .flatMap((l) => [
        `${l.active ? "*" : " "} ${l.name}${l.active ? " (active)" : ""}: ${l.files.length ? `${l.files.length} file${l.files.length === 1 ? "" : "s"}` : "no changes"}`,
        ...l.files.map(
          (f) =>
            `    ${f.path}: ${f.whole_file ? `whole file (${f.whole_file})` : [`${f.lines} line${f.lines === 1 ? "" : "s"}`, f.deletions ? `${f.deletions} deletion${f.deletions === 1 ? "" : "s"}` : ""].filter(Boolean).join(", ") + ` (range${f.ranges.length === 1 ? "" : "s"} ${f.ranges.join(", ")})`}`,
        ),
      ])
      .join("\n");
    return { lists: out, active: lists.active, text };
  },
});
