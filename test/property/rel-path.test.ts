import path from "node:path";
import fc from "fast-check";
import { describe, it } from "vitest";
import { absOf, relOf } from "../../src/vfs/rel-path.js";
import { check } from "./runs.js";

// The oracle is node's own path.join and path.relative: on random paths built from the pieces that make paths odd
// (empty, `.`, `..`, dotted names, doubled and trailing separators), the short ways must give exactly their answers.
const piece = fc.constantFrom("a", "bc", ".", "..", ".d", "e.", "...", "", "f..g");
const relPath = fc.tuple(fc.array(piece, { maxLength: 5 }), fc.boolean()).map(([parts, slash]) => parts.join("/") + (slash ? "/" : ""));
const root = fc.tuple(relPath, fc.integer({ min: 0, max: 9 })).map(([p, k]) => (k === 0 ? p : `/${p}`));

describe("rel-path against path.join and path.relative (property)", () => {
  it("absOf is path.join, relOf is path.relative with / separators", async () => {
    await check(
      fc.property(root, relPath, relPath, (r, rel, other) => {
        if (absOf(r, rel) !== path.join(r, rel)) return false;
        for (const abs of [`${r}/${rel}`, r + rel, path.join(r, rel), `/${other}`]) {
          if (relOf(r, abs) !== path.relative(r, abs).split(path.sep).join("/")) return false;
        }
        return true;
      }),
      2_000,
    );
  });
});
