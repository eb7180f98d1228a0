import { utimesSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { builtMain, staleOutputs } from "./built.js";
import { tmpWorkspace } from "./tmp.js";

describe("the end-to-end tests never run a stale dist/", () => {
  it("names each source whose compiled file is missing or older; a .d.ts and other files need none", () => {
    const ws = tmpWorkspace({
      files: {
        "src/fresh.ts": "",
        "out/fresh.js": "",
        "src/deep/old.ts": "",
        "out/deep/old.js": "",
        "src/missing.ts": "",
        "src/types.d.ts": "",
        "src/data.json": "",
      },
    });
    try {
      const at = (rel: string, seconds: number) => utimesSync(path.join(ws.dir, rel), seconds, seconds);
      at("src/fresh.ts", 1_000);
      at("out/fresh.js", 1_000); // as new as its source: fresh
      at("src/deep/old.ts", 2_000);
      at("out/deep/old.js", 1_999);
      expect(staleOutputs(path.join(ws.dir, "src"), path.join(ws.dir, "out"))).toEqual([path.join("deep", "old.ts"), "missing.ts"]);
    } finally {
      ws.cleanup();
    }
  });

  it("the daemon the tests spawn is built from the source as it is now", () => {
    expect(builtMain()).toMatch(/dist\/src\/main\.js$/);
  });
});
