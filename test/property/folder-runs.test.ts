/**
 * find_file's folder blocks (FolderRuns) against plain arrays of each folder's files: after any adds and removes, each
 * folder's slots, masks and letter bits are the model's, though blocks moved to the end when full, the buffer grew, and
 * moved blocks' garbage was packed away, or every block was packed to the room its files take (enough files that all
 * of these happen in most runs).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FolderRuns } from "../../src/search/folder-runs.js";
import { MASK_BITS, filesHolding, filesOneBitShort } from "../../src/search/letter-bits.js";
import { check } from "./runs.js";

const mask = fc.integer({ min: 0, max: (1 << MASK_BITS) - 1 });
const op = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant("folder" as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("append" as const), folder: fc.nat(), mask, times: fc.integer({ min: 1, max: 80 }) }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant("remove" as const), folder: fc.nat(), at: fc.nat(), times: fc.integer({ min: 1, max: 20 }) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant("pack" as const), tight: fc.boolean() }), weight: 1 },
);

/** What FolderRuns tells of folder f: its files, and per word the bits filesHolding and filesOneBitShort give. */
function seen(runs: FolderRuns, f: number, needs: number[], whole: boolean[]) {
  const size = runs.size(f);
  const files = Array.from({ length: size }, (_, k) => [runs.slot(f, k), runs.data[runs.filesAt(f) + 2 * k + 1]]);
  const words = Array.from({ length: (size + 31) >>> 5 }, (_, w) => [
    ...needs.map((need) => filesHolding(runs.data, runs.lettersAt(f), w, size, need)),
    filesOneBitShort(runs.data, runs.lettersAt(f), w, size, needs, whole),
  ]);
  return { files, words };
}

/** The same from plain arrays: each file's mask tested bit by bit. */
function expected(files: [number, number][], needs: number[], whole: boolean[]) {
  const missing = (m: number, need: number) => {
    let n = 0;
    for (let b = 0; b < MASK_BITS; b++) if ((need >> b) & 1 && !((m >> b) & 1)) n++;
    return n;
  };
  const word = (w: number, holds: (m: number) => boolean) => {
    let bits = 0;
    for (let b = 0; b < 32 && 32 * w + b < files.length; b++) if (holds(files[32 * w + b][1])) bits |= 1 << b;
    return bits;
  };
  const oneShort = (m: number) => {
    const short = needs.map((need) => missing(m, need));
    return short.every((n, k) => n === 0 || (n === 1 && !whole[k])) && short.filter((n) => n > 0).length <= 1;
  };
  const words = Array.from({ length: (files.length + 31) >>> 5 }, (_, w) => [
    ...needs.map((need) => word(w, (m) => missing(m, need) === 0)),
    word(w, oneShort),
  ]);
  return { files, words };
}

describe("FolderRuns", () => {
  it("keeps each folder's files and letter bits as plain arrays would, through moves, growth and packing", async () => {
    await check(
      fc.property(
        fc.array(op, { minLength: 1, maxLength: 60, size: "max" }),
        fc.array(fc.tuple(mask, fc.boolean()), { minLength: 1, maxLength: 3 }),
        (ops, masks) => {
          const needs = masks.map(([m]) => m);
          const whole = masks.map(([, w]) => w);
          const runs = new FolderRuns();
          const model: [number, number][][] = [];
          let nextSlot = 0;
          for (const o of ops) {
            if (o.kind === "folder" || model.length === 0) {
              expect(runs.addFolder()).toBe(model.length);
              model.push([]);
            }
            const f = "folder" in o ? o.folder % model.length : 0;
            if (o.kind === "append")
              for (let k = 0; k < o.times; k++) {
                const m = (o.mask * (k + 1)) & ((1 << MASK_BITS) - 1); // masks that differ file to file
                runs.append(f, nextSlot, m);
                model[f].push([nextSlot++, m]);
              }
            else if (o.kind === "remove")
              for (let k = 0; k < o.times && model[f].length; k++) {
                const at = (o.at + k) % model[f].length;
                runs.removeAt(f, at);
                model[f].splice(at, 1);
              }
            else if (o.kind === "pack") runs.pack(o.tight);
            expect(seen(runs, f, needs, whole)).toEqual(expected(model[f], needs, whole));
          }
          // a move or a pack for one folder moves others' blocks
          for (let f = 0; f < model.length; f++) expect(seen(runs, f, needs, whole)).toEqual(expected(model[f], needs, whole));
        },
      ),
      100,
    );
  });
});
