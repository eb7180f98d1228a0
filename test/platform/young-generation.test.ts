/**
 * holdYoungGeneration keeps V8's young generation at its first size while objects survive its scavenges (as they do
 * while the daemon starts), releaseYoungGeneration lets it grow again, and a size the person chose with node's flags is
 * left alone. In a node process of its own (the built module), whose heap nothing else has grown.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const MODULE = pathToFileURL(fileURLToPath(new URL("../../dist/src/platform/young-generation.js", import.meta.url))).href;

/** Young generation sizes in bytes: at first, after churn that survives while held, then after the same churn released. */
function sizes(nodeFlags: string[] = []): { first: number; held: number; released: number } {
  const script = `
    import v8 from "node:v8";
    import { holdYoungGeneration, releaseYoungGeneration } from ${JSON.stringify(MODULE)};
    const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size;
    const keep = [];
    const churn = () => { for (let i = 0; i < 1e6; i++) { keep.push({ i, s: "x" + i }); if (keep.length > 2e5) keep.length = 0; } };
    const first = young();
    holdYoungGeneration();
    churn();
    const held = young();
    releaseYoungGeneration();
    churn();
    console.log(JSON.stringify({ first, held, released: young() }));
  `;
  const r = spawnSync(process.execPath, [...nodeFlags, "--input-type=module", "-e", script], { encoding: "utf8" });
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout);
}

describe("the young generation while the daemon starts", () => {
  it("stays at its first size while held, and grows once released", () => {
    const { first, held, released } = sizes();
    expect(held).toBeLessThanOrEqual(2 * first); // both semi-spaces of the first size, once a scavenge has run
    expect(released).toBeGreaterThan(2 * first);
  });

  it("is left alone when node's flags size it", () => {
    const { first, held } = sizes(["--max-semi-space-size=8"]);
    expect(held).toBeGreaterThan(2 * first);
  });
});
