import { defineConfig } from "vitest/config";
import { GIT_TEST_ENV } from "./test/helpers/git-env.js";
import SlowFirstSequencer from "./test/slow-first-sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // git's advice and warnings off for every git a test runs (test/helpers/git-env.ts)
    env: GIT_TEST_ENV,
    // Most of a test is waiting on a daemon, a language server or git: on a 2-core machine one worker per core leaves
    // the CPU half idle. Tests wait on events, not on time, so more of them at once only makes each slower.
    maxWorkers: 3,
    reporters: ["default", "./test/summary-reporter.ts"],
    // the slowest files first, cache or not (test/slow-first-sequencer.ts)
    sequence: { sequencer: SlowFirstSequencer },
  },
});
