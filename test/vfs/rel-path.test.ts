import path from "node:path";
import { describe, expect, it } from "vitest";
import { absOf, relOf } from "../../src/vfs/rel-path.js";

// The oracle is node's own path.relative and path.join: the short ways must give their answers, odd paths included.
describe("rel-path", () => {
  const roots = ["/tmp/r", "/tmp/r/", "/", "/tmp//r", "/tmp/./r", "/tmp/../r", "rel/x", "/a.b/.c", "/tmp/r.."];
  const rels = ["", "a", "a/b", ".a", "a/.b", "./a", "a/./b", "a/../b", "..", "../x", "a//b", "a/", "/a", "...", "a..", "..a/b", "a/..."];

  it("absOf is path.join", () => {
    for (const root of roots) for (const rel of rels) expect(absOf(root, rel), `${root} + ${rel}`).toBe(path.join(root, rel));
  });

  it("relOf is path.relative with / separators, inside the root or not", () => {
    for (const root of roots) {
      for (const rel of rels) {
        for (const abs of [`${root}/${rel}`, root + rel, path.join(root, rel), `/elsewhere/${rel}`, root]) {
          expect(relOf(root, abs), `${abs} from ${root}`).toBe(path.relative(root, abs).split(path.sep).join("/"));
        }
      }
    }
  });
});
