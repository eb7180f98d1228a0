/**
 * `npm run bench`: the caller-side suites of issue 23 (`caller`, `scale` at 100k files), every figure timed from outside
 * the daemon beside its peer; `npm run bench -- NAME...` runs the named suites, `all` every one (`scale` then takes
 * both trees unless BENCH_SCALE says otherwise). Figures, not assertions: tests never time anything. A suite that fails is reported and the
 * others still run; the exit code says whether any failed.
 */
const SUITES: Record<string, () => Promise<{ default: () => Promise<void> }>> = {
  vfs: () => import("./vfs.js"),
  search: () => import("./search.js"),
  files: () => import("./file-tools.js"),
  git: () => import("./git.js"),
  processes: () => import("./processes.js"),
  mcp: () => import("./mcp.js"),
  "mcp-server": () => import("./mcp-server.js"),
  "mcp-wait": () => import("./mcp-wait.js"),
  "mcp-revisions": () => import("./mcp-revisions.js"),
  lsp: () => import("./lsp.js"),
  conflicts: () => import("./conflicts-corpus.js"),
  "conflict-tools": () => import("./conflicts.js"),
  agent: () => import("./agent.js"),
  terminal: () => import("./terminal.js"),
  "line-git": () => import("./line-git.js"),
  burst: () => import("./burst.js"),
  caller: () => import("./caller.js"),
  "line-git-caller": () => import("./caller.js").then((m) => ({ default: m.lineGitOnly })),
  scale: () => import("./scale.js"),
  "scale-find": () => import("./scale-find.js"),
  rss: () => import("./rss.js"),
  "profile-reads": () => import("./profile-reads.js"),
};
/**
 * What `npm run bench` runs alone: issue 23's figures, within 15 minutes on the project's machine. The million-file
 * tree is left to `npm run bench -- scale` (or BENCH_SCALE=1M): with it the default run took 19 minutes and more.
 */
const DEFAULT = ["caller", "scale"];
const DEFAULT_SCALE = "100k";

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== "all" && !(a in SUITES));
if (unknown.length) {
  console.error(`unknown suite ${unknown.join(", ")}; suites: ${Object.keys(SUITES).join(", ")}, or all`);
  process.exit(2);
}
const wanted = args.includes("all") ? Object.keys(SUITES) : args.length ? args : DEFAULT;
if (!args.length && process.env.BENCH_SCALE === undefined) {
  process.env.BENCH_SCALE = DEFAULT_SCALE;
  console.log(`(scale at ${DEFAULT_SCALE} only; \`npm run bench -- scale\` adds the million-file tree)`);
}
const failed: string[] = [];
const t0 = performance.now();
for (const name of wanted) {
  console.log(`\n## ${name}`);
  const t = performance.now();
  try {
    await (await SUITES[name]()).default();
  } catch (e) {
    failed.push(name);
    console.error(`suite ${name} failed: ${(e as Error).stack ?? e}`);
  }
  console.log(`(${name}: ${((performance.now() - t) / 1000).toFixed(0)} s)`);
}
console.log(
  `\n${wanted.length - failed.length} suites done in ${((performance.now() - t0) / 60_000).toFixed(1)} min${failed.length ? `; failed: ${failed.join(", ")}` : ""}`,
);
process.exitCode = failed.length ? 1 : 0;
