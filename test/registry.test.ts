import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { manifestText, referenceText } from "../src/manifest.js";
import { TOOLS } from "../src/tools/index.js";
import { TOOL_ID_PATTERN, firstSentence } from "../src/dispatch/tool.js";

describe("registry", () => {
  it("tools.json is what `npm run tools-json` generates (regenerate it when this fails)", () => {
    const checkedIn = readFileSync(path.join(__dirname, "../tools.json"), "utf8");
    expect(checkedIn).toBe(manifestText());
    expect(readFileSync(path.join(__dirname, "../docs/tools/reference.md"), "utf8")).toBe(referenceText());
  });

  it("every error code is documented in docs/errors.md", async () => {
    const { ERROR_CODES } = await import("../src/errors.js");
    const doc = readFileSync(path.join(__dirname, "../docs/errors.md"), "utf8");
    expect(ERROR_CODES.filter((code) => !doc.includes(`\`${code}\``))).toEqual([]);
  });

  it("tool ids can be function names for any model API, and are unique", () => {
    for (const t of TOOLS) expect(t.id).toMatch(TOOL_ID_PATTERN);
    expect(new Set(TOOLS.map((t) => t.id)).size).toBe(TOOLS.length);
  });

  it("every param a model sees is described", () => {
    for (const t of TOOLS) {
      for (const [name, schema] of Object.entries(t.params.shape)) {
        expect((schema as { description?: string }).description, `${t.id}.${name}`).toBeTruthy();
      }
    }
  });

  it("list shows the first sentence of a description", () => {
    expect(firstSentence("Reads a file. Then more.")).toBe("Reads a file.");
    expect(firstSentence("Uses v1.2 of it. Then.")).toBe("Uses v1.2 of it.");
    expect(firstSentence("No period")).toBe("No period");
  });
});
