/** Pure parsing of `git status --porcelain=v2 -z --branch`. */

export interface StatusEntry {
  path: string;
  /** Two letters as git prints them: index then worktree (`M.`, `.M`, `A.`, `??`, `UU`…). */
  xy: string;
  /** The source of a rename or copy. */
  from?: string;
}

export interface Status {
  head: string | null;
  branch: string | null;
  upstream: string | null;
  ahead: number | null;
  behind: number | null;
  staged: StatusEntry[];
  unstaged: StatusEntry[];
  untracked: string[];
  conflicted: StatusEntry[];
}

export function parseStatus(out: string): Status {
  const s: Status = { head: null, branch: null, upstream: null, ahead: null, behind: null, staged: [], unstaged: [], untracked: [], conflicted: [] };
  const recs = out.split("\0");
  for (let i = 0; i < recs.length; i++) {
    const rec = recs[i];
    if (!rec) continue;
    if (rec.startsWith("# ")) {
      const [key, ...rest] = rec.slice(2).split(" ");
      const val = rest.join(" ");
      if (key === "branch.oid") s.head = val === "(initial)" ? null : val;
      else if (key === "branch.head") s.branch = val === "(detached)" ? null : val;
      else if (key === "branch.upstream") s.upstream = val;
      else if (key === "branch.ab") {
        const m = /^\+(\d+) -(\d+)$/.exec(val);
        if (m) [s.ahead, s.behind] = [Number(m[1]), Number(m[2])];
      }
      continue;
    }
    const kind = rec[0];
    if (kind === "?") s.untracked.push(rec.slice(2));
    else if (kind === "1" || kind === "2") {
      const fields = rec.split(" ");
      const xy = fields[1];
      const nFields = kind === "1" ? 8 : 9;
      const p = fields.slice(nFields).join(" ");
      const entry: StatusEntry = { path: p, xy };
      if (kind === "2") entry.from = recs[++i];
      if (xy[0] !== ".") s.staged.push(entry);
      if (xy[1] !== ".") s.unstaged.push(entry);
    } else if (kind === "u") {
      const fields = rec.split(" ");
      s.conflicted.push({ path: fields.slice(10).join(" "), xy: fields[1] });
    }
  }
  return s;
}

export function isClean(s: Status): boolean {
  return !s.staged.length && !s.unstaged.length && !s.untracked.length && !s.conflicted.length;
}

/** Tracked files with changes (staged, unstaged or conflicted): what a checkout or reset could touch. */
export function dirtyPaths(s: Status): string[] {
  return [...new Set([...s.staged, ...s.unstaged, ...s.conflicted].map((e) => e.path))];
}
