/**
 * How many cases a property test runs, and from which seed. `npm test` runs a bounded number (seconds, not minutes);
 * `npm run fuzz` raises it through FUZZ_RUNS. A failure prints fast-check's seed and path: replay it with
 * `FUZZ_SEED=<seed> FUZZ_PATH=<path> npx vitest run <file>`.
 */
import fc from "fast-check";

/** Runs per property: FUZZ_RUNS when set (npm run fuzz), else `quick`, the suite's budget for that property. */
export function runs(quick: number): number {
  const n = Number(process.env.FUZZ_RUNS);
  return Number.isSafeInteger(n) && n > 0 ? n : quick;
}

/** fast-check parameters for one property: its run count, a replayable seed, and a report that names them. */
export function params<T>(quick: number): fc.Parameters<T> {
  const seed = Number(process.env.FUZZ_SEED);
  return {
    numRuns: runs(quick),
    ...(Number.isSafeInteger(seed) ? { seed } : {}),
    ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
    verbose: 1,
  };
}

/** Asserts a property; on failure the thrown message carries the seed and path that replay it. */
export async function check<Ts extends [unknown, ...unknown[]]>(property: fc.IAsyncProperty<Ts> | fc.IProperty<Ts>, quick: number): Promise<void> {
  await fc.assert(property as fc.IAsyncProperty<Ts>, params<Ts>(quick));
}

/** How long a property file's cleanup may take: a fuzz run leaves repositories of tens of thousands of objects. */
export const CLEANUP_MS = 600_000;
