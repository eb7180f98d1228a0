/**
 * The line-level git service of one workspace (SPEC 8): the versions cache every line tool reads through and the
 * changelist tracker on the bus. The daemon starts it once the workspace is live (startLineGit), so the tracker
 * follows every change from then on; a tool reaching it first starts it too.
 */
import type { FileMarks } from "../core/changelist-marks.js";
import type { Workspace } from "../workspace.js";
import { Changelists } from "./changelists.js";
import { type LineFile, LineFiles } from "./line-versions.js";
import { gitState } from "./repo.js";
import type { GitCtx } from "./run.js";

export interface LineGit {
  files: LineFiles;
  changelists: Changelists;
}

const services = new WeakMap<Workspace, LineGit>();

export function lineGit(ws: Workspace): LineGit {
  let svc = services.get(ws);
  if (svc) return svc;
  const files = new LineFiles(ws);
  const changelists = new Changelists(ws, files);
  svc = { files, changelists };
  services.set(ws, svc);
  changelists.start();
  ws.onDispose(() => changelists.stop());
  return svc;
}

/** A file's three versions read now, with its changelist marks carried to them: what the read-only line tools answer from. */
export async function fileWithMarks(ctx: GitCtx & { ws: Workspace }, path: string): Promise<{ svc: LineGit; file: LineFile; marks: FileMarks }> {
  const svc = lineGit(ctx.ws);
  const file = await svc.files.load(ctx, path);
  return { svc, file, marks: await svc.changelists.marksFor(file) };
}

/** Starts following the bus and loads the stored changelists in the background (a root outside git has none). */
export function startLineGit(ws: Workspace): void {
  const { changelists } = lineGit(ws);
  changelists.ready({ ws }).catch(() => undefined);
}

/** `info` state of the line tools: git's, plus the changelists (loaded when the root is a repository). */
export async function lineGitState(ws: Workspace): Promise<Record<string, unknown>> {
  const state = await gitState(ws);
  const { changelists } = lineGit(ws);
  if (!state.repository) return state;
  const loaded = await changelists.ready({ ws }).then(() => true, () => false);
  return {
    ...state,
    changelists: loaded
      ? { lists: changelists.names(), active: changelists.active, files_outside_active: changelists.trackedFiles, files_followed: changelists.followed, store: ".git/tool-layer/changelists.json" }
      : { loaded: false },
  };
}
