import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The slowest test files, longest first, as a CI run of the whole suite measured them (seconds, 3 workers, 2 cores).
 * CI runs on a fresh clone, where vitest has no cache of durations and starts the larger files first: a small but slow
 * file would start last and hold the run's end. A file not listed (or renamed) keeps vitest's own order after these.
 */
const SLOWEST = [
  "test/e2e/package.e2e.test.ts", // 128 s: npm pack, install, tsc
  "test/vfs/vfs.e2e.test.ts", // 124 s
  "test/vfs/watcher-host.e2e.test.ts", // 213 s with 6,000 calls an engine, now 3,000 and 1,000
  "test/vfs/hardening.e2e.test.ts", // 63 s
  "test/e2e/foundations.test.ts", // 48 s
  "test/protocol/mcp/mcp-revisions.e2e.test.ts", // 40 s
  "test/lsp/tools-lifecycle.test.ts", // 36 s
  "test/platform/containment.e2e.test.ts", // 30 s
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOWEST.indexOf(path.relative(f.project.config.root, f.moduleId).split(path.sep).join("/"));
      return i < 0 ? SLOWEST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i, r: rank(f) }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
      .map(({ f }) => f);
  }
}
