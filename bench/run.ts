/**
 * `npm run bench [-- NAME...]`: runs each benchmark module (or the named ones) against the built daemon and its peer,
 * printing medians and ratios. Figures, not assertions: tests never time anything.
 */
const SUITES: Record<string, () => Promise<{ default: () => Promise<void> }>> = {
  vfs: () => import("./vfs.js"),
  search: () => import("./search.js"),
  files: () => import("./file-tools.js"),
  git: () => import("./git.js"),
  processes: () => import("./processes.js"),
  mcp: () => import("./mcp.js"),
  "mcp-server": () => import("./mcp-server.js"),
  lsp: () => import("./lsp.js"),
  conflicts: () => import("./conflicts-corpus.js"),
  "conflict-tools": () => import("./conflicts.js"),
  agent: () => import("./agent.js"),
  terminal: () => import("./terminal.js"),
  "line-git": () => import("./line-git.js"),
  burst: () => import("./burst.js"),
};

const wanted = process.argv.slice(2);
for (const [name, load] of Object.entries(SUITES)) {
  if (wanted.length && !wanted.includes(name)) continue;
  console.log(`\n## ${name}`);
  const suite = await load();
  await suite.default();
}
