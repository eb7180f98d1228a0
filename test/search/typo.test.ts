import { describe, expect, it } from "vitest";
import { TYPO_MIN_TERM, commonPrefix, dropsNeeded, maxTypoEdits, substringEditDistance } from "../../src/search/typo.js";

/** The letters to drop by brute force: every subset of at most two positions. */
function bruteDrops(term: string, text: string): 0 | 1 | 2 {
  const isSub = (t: string) => {
    let at = 0;
    for (const c of t) {
      at = text.indexOf(c, at);
      if (at < 0) return false;
      at++;
    }
    return true;
  };
  if (isSub(term)) return 0;
  for (let k = 0; k < term.length; k++) if (isSub(term.slice(0, k) + term.slice(k + 1))) return 1;
  return 2;
}

describe("dropsNeeded", () => {
  it("covers the usual typos with one dropped letter: a swap, an extra letter, a wrong letter", () => {
    expect(dropsNeeded("fiel-write", "file-write-ts", 0)).toBe(1); // swap
    expect(dropsNeeded("dispatcehr", "dispatcher-ts", 0)).toBe(1); // swap
    expect(dropsNeeded("dispattcher", "dispatcher", 0)).toBe(1); // extra letter
    expect(dropsNeeded("dispatvher", "dispatcher", 0)).toBe(1); // wrong letter
    expect(dropsNeeded("dsptchr", "dispatcher", 0)).toBe(0); // a missing letter is a plain subsequence
    expect(dropsNeeded("xyzdispatcher", "dispatcher", 0)).toBe(2);
    expect(dropsNeeded("file", "src/file", 4)).toBe(0);
    expect(dropsNeeded("file", "src/file", 5)).toBe(1);
  });

  it("agrees with brute force on random words", () => {
    let x = 11;
    const rand = (n: number) => Array.from({ length: n }, () => "abcde"[((x = (x * 1103515245 + 12345) & 0x7fffffff) >> 16) % 5]).join("");
    for (let i = 0; i < 3000; i++) {
      const term = rand(2 + (i % 6));
      const text = rand(i % 12);
      expect(dropsNeeded(term, text, 0), `${term} in ${text}`).toBe(bruteDrops(term, text));
    }
  });
});

describe("substringEditDistance", () => {
  it("counts the edits that make the term a part of the text, a swap being one", () => {
    expect(substringEditDistance("paymnetcontroller", "paymentcontrollerdiscount", 0)).toBe(1);
    expect(substringEditDistance("service", "userservice", 0)).toBe(0);
    expect(substringEditDistance("usersrevice", "userservice-ts", 0)).toBe(1);
    expect(substringEditDistance("dispatvher", "dispatcher-ts", 0)).toBe(1);
    expect(substringEditDistance("dispattcher", "dispatcher", 0)).toBe(1);
    expect(substringEditDistance("abc", "xyz", 0)).toBe(3);
    expect(substringEditDistance("abc", "zzabc", 2)).toBe(0);
    expect(substringEditDistance("", "abc", 0)).toBe(0);
  });

  it("counts the letters two strings share at the start", () => {
    expect(commonPrefix("dispatcehr", "src/dispatcher", 4)).toBe(7);
    expect(commonPrefix("x", "abc", 0)).toBe(0);
  });
});

describe("maxTypoEdits", () => {
  it("allows one edit in a short word and one more per four letters beyond", () => {
    expect([TYPO_MIN_TERM, 8, 9, 12, 13, 17].map(maxTypoEdits)).toEqual([1, 1, 2, 2, 3, 4]);
  });
});
