/**
 * The end-to-end tests spawn the built daemon (dist/src/main.js), so a dist/ older than src/ would test yesterday's code
 * and pass or fail for reasons the source no longer has. `npm test` builds first; a test run without it fails here.
 */
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** The sources under `srcDir` whose compiled file under `outDir` is missing or older than they are (paths from `srcDir`). */
export function staleOutputs(srcDir: string, outDir: string): string[] {
  const stale: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(srcDir, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
        const out = statSync(path.join(outDir, child.replace(/\.ts$/, ".js")), { throwIfNoEntry: false });
        if (!out || out.mtimeMs < statSync(path.join(srcDir, child)).mtimeMs) stale.push(child);
      }
    }
  };
  walk("");
  return stale.sort();
}

/** dist/src/main.js, once dist/src is at least as new as every file of src/; otherwise an error that says so. */
export function builtMain(): string {
  const stale = staleOutputs(path.join(REPO, "src"), path.join(REPO, "dist", "src"));
  if (stale.length) {
    const shown = stale
      .slice(0, 5)
      .map((f) => `src/${f}`)
      .join(", ");
    throw new Error(
      `dist/ is older than src/ (${shown}${stale.length > 5 ? `, ${stale.length - 5} more` : ""}): run \`npm run build\` before the end-to-end tests (npm test builds first)`,
    );
  }
  return path.join(REPO, "dist", "src", "main.js");
}
