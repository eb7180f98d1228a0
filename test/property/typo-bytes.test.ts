/**
 * The typo pass's fast forms against the plain ones: NameBytes.dropsNeeded (on the name's bytes) against typo.ts'
 * dropsNeeded on the string, NameBytes.subsequenceFrom and includes (the scan's tests) against the same on the string,
 * and EditDistance.substring (its rows reused from call to call, whatever
 * the lengths before) against the textbook table built afresh for each call.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maskOf, twiceMaskOf } from "../../src/search/fuzzy.js";
import { NameBytes, encodeTerm } from "../../src/search/name-bytes.js";
import { EditDistance, dropsNeeded } from "../../src/search/typo.js";
import { check } from "./runs.js";

/** Few letters, so terms and names share many and typos of every kind come up. */
const text = (max: number) => fc.string({ unit: fc.constantFrom("a", "b", "c", "d", "-", "é"), maxLength: max });

/** Sellers' edit distance with transpositions, a fresh (n+1) x (m+1) table per call: what the scratch rows must equal. */
function plainEditDistance(term: string, name: string, from: number): number {
  const n = term.length;
  const m = name.length - from;
  if (n === 0) return 0;
  const d = Array.from({ length: n + 1 }, (_, i) => Array.from({ length: m + 1 }, (_, j) => (j === 0 ? i : 0)));
  for (let i = 1; i <= n; i++)
    for (let j = 1; j <= m; j++) {
      const a = term[i - 1];
      const b = name[from + j - 1];
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a === b ? 0 : 1));
      if (i > 1 && j > 1 && a === name[from + j - 2] && term[i - 2] === b) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return Math.min(...d[n]);
}

describe("typo tests on bytes and scratch rows", () => {
  it("NameBytes.dropsNeeded is dropsNeeded on the name's string", async () => {
    await check(
      fc.property(fc.array(fc.tuple(text(8), text(14)), { minLength: 1, maxLength: 20 }), (pairs) => {
        const bytes = new NameBytes();
        for (const [slot, [, name]] of pairs.entries()) bytes.set(slot, name);
        pairs.forEach(([term, name], slot) => {
          const code = encodeTerm(term);
          if (term.length === 0 || code === null || bytes.wide(slot)) return; // those take the string form
          expect(bytes.dropsNeeded(slot, code), `${term} in ${name}`).toBe(dropsNeeded(term, name, 0));
        });
      }),
      300,
    );
  });

  it("NameBytes.subsequenceFrom and includes are the string's subsequence and substring tests, from any letter of the term", async () => {
    const subsequenceFrom = (term: string, skip: number, name: string) => {
      let at = 0;
      for (let k = skip; k < term.length; k++) {
        at = name.indexOf(term[k], at);
        if (at < 0) return false;
        at++;
      }
      return true;
    };
    await check(
      fc.property(fc.array(fc.tuple(text(8), text(14), fc.nat(9)), { minLength: 1, maxLength: 20 }), (triples) => {
        const bytes = new NameBytes();
        for (const [slot, [, name]] of triples.entries()) bytes.set(slot, name);
        triples.forEach(([term, name, skip], slot) => {
          const code = encodeTerm(term);
          if (code === null || bytes.wide(slot)) return; // those take the string form
          expect(bytes.subsequenceFrom(slot, code, skip), `${term} from ${skip} in ${name}`).toBe(subsequenceFrom(term, skip, name));
          expect(bytes.includes(slot, code), `${term} in ${name}`).toBe(name.includes(term));
        });
      }),
      300,
    );
  });

  it("EditDistance equals the textbook table, call after call of any lengths on the same rows", async () => {
    await check(
      fc.property(fc.array(fc.tuple(text(10), text(40), fc.nat(5)), { minLength: 1, maxLength: 20 }), (calls) => {
        const edits = new EditDistance();
        for (const [term, name, skip] of calls) {
          const from = Math.min(skip, name.length);
          expect(edits.substring(term, name, from), `${term} in ${name} from ${from}`).toBe(plainEditDistance(term, name, from));
        }
      }),
      300,
    );
  });
});

describe("the typo pass's letter-count bound", () => {
  it("a name short of the term's letters by the masks is short of dropsNeeded's drops too", async () => {
    // per mask bit: a bit the name lacks costs at least one drop, a bit the term sets twice and the name not twice one more
    const wide = fc.string({ unit: fc.constantFrom("a", "b", "c", "1", "2", "-", "é", "ß", " "), maxLength: 14 });
    await check(
      fc.property(
        wide.filter((t) => t.length > 0),
        wide,
        (term, name) => {
          const short = bits(maskOf(term) & ~maskOf(name)) + bits(twiceMaskOf(term) & ~twiceMaskOf(name));
          expect(dropsNeeded(term, name, 0), `${term} in ${name}, short ${short}`).toBeGreaterThanOrEqual(Math.min(short, 2));
        },
      ),
      2000,
    );
  });
});

function bits(m: number): number {
  let n = 0;
  for (let v = m; v !== 0; v &= v - 1) n++;
  return n;
}
