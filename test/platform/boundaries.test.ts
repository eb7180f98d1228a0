/**
 * The platform's one-way rules (issue 21), read from the source: one module starts processes, one builds bubblewrap's
 * command line, and the platform and the services it runs keep no state at module level.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src", import.meta.url));

/** Every .ts file under src/, as [path from the repository, text]. */
const sources: [string, string][] = readdirSync(SRC, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .sort()
  .map((f) => [path.join("src", f), readFileSync(path.join(SRC, f), "utf8")]);

const matching = (re: RegExp, where: (file: string) => boolean = () => true) => sources.filter(([f, text]) => where(f) && re.test(text)).map(([f]) => f);

describe("the platform's boundaries", () => {
  it("child_process is imported by the supervisor alone (statically, dynamically or by require)", () => {
    // The client (src/client/) runs in the Gateway, not in the daemon: it spawns the daemon itself.
    expect(matching(/["'](node:)?child_process["']/, (f) => !f.startsWith("src/client/"))).toEqual(["src/platform/supervisor.ts"]);
  });

  it("bubblewrap's options are written only by the argv builder in src/platform/sandbox/", () => {
    // As a string in code (comments name them in backquotes).
    const bwrapOption = /["']--(ro-bind|bind|bind-fd|ro-bind-fd|unshare-[a-z]+|die-with-parent|new-session|tmpfs|proc|dev|cap-drop|json-status-fd)["']/;
    const found = matching(bwrapOption);
    expect(found.length).toBeGreaterThan(0);
    expect(found.filter((f) => !f.startsWith("src/platform/sandbox/"))).toEqual([]);
  });

  it("no mutable state at module level in src/platform, src/lsp and src/mcp: no top-level let or var, no top-level Map", () => {
    const ours = (f: string) => /^src\/(platform|lsp|mcp)\//.test(f);
    expect(matching(/^(export )?(let|var) /m, ours)).toEqual([]);
    expect(matching(/^(export )?const \w+(: [^=]+)? = new (Map|WeakMap|Set|WeakSet)\b/m, ours)).toEqual([]);
  });
});
