import path from "node:path";
import { describe, expect, it } from "vitest";
import { at, waitChange } from "../vfs/daemon-changes.js";
import { type DaemonClient, daemonForSuite } from "../helpers/daemon.js";
import { git, tmpWorkspace, writeFile } from "../helpers/tmp.js";

/**
 * search (rg) and find_file (the VFS index) must see the same files: git's rules in a repository, the VFS's defaults
 * and .gitignore files outside one. Every file holds `needle`, rule files in a comment, so a search with hidden:true
 * finds exactly the files find_file lists.
 */
const FILES = {
  // above the root: neither git (outside the repository) nor the VFS (outside the root) reads it
  ".gitignore": "*.ts\n# needle\n",
  // the user's global excludes file (HOME is this folder for the daemon)
  "home/.config/git/ignore": "*.swp\n",
  "root/a.ts": "needle\n",
  "root/early.swp": "needle\n",
  "root/.gitignore": "*.log\n# needle\n",
  "root/debug.log": "needle\n",
  "root/src/.ignore": "lib/\n# needle\n", // ripgrep's own rule files, not git's
  "root/src/lib/x.ts": "needle\n",
  "root/b/.rgignore": "y.ts\n# needle\n",
  "root/b/y.ts": "needle\n",
  "root/b/.gitignore": "gen/\n# needle\n",
  "root/b/gen/z.ts": "needle\n",
  "root/.env": "needle\n",
};

describe.each([true, false])("search and find_file agree on ignored files (git: %s)", (inGit) => {
  const ws = tmpWorkspace({ files: FILES });
  const root = path.join(ws.dir, "root");
  if (inGit) git(root, "init", "-q");
  let d: DaemonClient;
  daemonForSuite({ dir: root, cleanup: ws.cleanup }, (c) => (d = c), [], { HOME: path.join(ws.dir, "home"), XDG_CONFIG_HOME: "" });

  it("same files, whatever .ignore, .rgignore, a .gitignore above the root or the global excludes say, also for files made later", async () => {
    const same = async () => {
      const searched = (await d.ok("search", { pattern: "needle", hidden: true, max_results: 1000 })).matches.map((f: { path: string }) => f.path);
      const listed = (await d.ok("find_file", { glob: "**", limit: 1000 })).paths;
      expect(searched.join(" ")).toBe(listed.join(" "));
      return listed;
    };
    const atStart = [".env", ".gitignore", "a.ts", "b/.gitignore", "b/.rgignore", "b/y.ts", "src/.ignore", "src/lib/x.ts"];
    expect(await same()).toEqual(inGit ? atStart : [...atStart, "early.swp"].sort()); // outside git no global excludes
    for (const rel of ["late.swp", "b/gen/late.ts", "src/lib/late.ts", "marker.txt"]) writeFile(root, rel, "needle\n");
    for (const rel of ["src/lib/late.ts", "marker.txt"]) await waitChange(d, at(rel));
    expect(await same()).toContain("src/lib/late.ts");
  });
});
