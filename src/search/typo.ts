/**
 * The typo-tolerant test behind find_file's fallback tier (pure). A subsequence matcher (fzf, nucleo, fuzzysort) already
 * forgives a letter the query leaves out; one letter too many finds nothing. Allowing one letter of the query to be
 * dropped also covers a swap of two neighbours (`fiel` -> drop `e` -> `fil`, in `file`) and a wrong letter (`dispatvher`
 * -> `dispather`, in `dispatcher`): so one test, "a subsequence once one letter is dropped", covers the usual typos.
 */

/** Shorter terms are left exact: with one letter dropped, a three-letter subsequence is in a large share of names. */
export const TYPO_MIN_TERM = 5;

/**
 * The most edits (substringEditDistance) a typo hit may be from the term: one in a word of up to 8 letters, one more per
 * 4 letters beyond, room for a letter left out besides the typo. A name that holds the term only scattered once a letter
 * is dropped (`globls` in compile-off-by-default.test.ts, 5 edits) is no typo of it.
 */
export function maxTypoEdits(termLength: number): number {
  return 1 + Math.max(0, Math.floor((termLength - TYPO_MIN_TERM) / 4));
}

/**
 * How many letters of `term` (lower case) must be dropped for it to be a subsequence of `text[from..]`: 0, 1, or 2 for
 * "more than one". One pass: `exact` is how much of the term matched so far with nothing dropped, `dropped` how much
 * with one letter dropped (greedy is optimal for both: matching more of the term never hurts), and the pass stops once
 * what is left of the text is too short.
 */
export function dropsNeeded(term: string, text: string, from: number): 0 | 1 | 2 {
  const n = term.length;
  let exact = 0;
  let dropped = 1; // dropping the first letter costs nothing in text
  const end = text.length;
  for (let i = from; i < end; i++) {
    if (end - i < n - dropped) return 2;
    const c = text.charCodeAt(i);
    if (dropped < n && term.charCodeAt(dropped) === c) dropped++;
    if (exact < n && term.charCodeAt(exact) === c) {
      exact++;
      if (exact === n) return 0;
      if (exact + 1 > dropped) dropped = exact + 1; // drop the letter after the exact part
    }
  }
  return exact === n ? 0 : dropped >= n ? 1 : 2;
}

/** Letters the two share at the start: a typo is usually further in (`dispatcehr` keeps `dispatc`). */
export function commonPrefix(a: string, b: string, bFrom: number): number {
  let k = 0;
  while (k < a.length && bFrom + k < b.length && a.charCodeAt(k) === b.charCodeAt(bFrom + k)) k++;
  return k;
}

/**
 * The fewest edits (a letter changed, added or dropped, or two neighbours swapped) that make `term` a substring of
 * `text[from..]`: Sellers' edit distance with free start and end in the text, plus transpositions (optimal string
 * alignment). It ranks typo hits: `paymnetcontroller` is one edit from a part of `paymentcontrollerdiscount`.
 * An instance keeps its rows from call to call (a typo pass measures thousands of names); substringEditDistance is one
 * call on fresh rows.
 */
export class EditDistance {
  private rows = new Int32Array(256);

  substring(term: string, text: string, from: number): number {
    const n = term.length;
    const m = text.length - from;
    if (n === 0) return 0;
    // three rows of the reused buffer (a typo pass measures thousands of names): row i-2, row i-1, row i
    if (this.rows.length < 3 * (m + 1)) this.rows = new Int32Array(6 * (m + 1));
    let before = 0;
    let previous = m + 1;
    let current = 2 * (m + 1);
    const rows = this.rows;
    rows.fill(0, previous, current); // row 0 is all zeros: a match may start anywhere
    for (let i = 1; i <= n; i++) {
      rows[current] = i;
      const a = term.charCodeAt(i - 1);
      for (let j = 1; j <= m; j++) {
        const b = text.charCodeAt(from + j - 1);
        let d = Math.min(rows[previous + j] + 1, rows[current + j - 1] + 1, rows[previous + j - 1] + (a === b ? 0 : 1));
        if (i > 1 && j > 1 && a === text.charCodeAt(from + j - 2) && term.charCodeAt(i - 2) === b) d = Math.min(d, rows[before + j - 2] + 1);
        rows[current + j] = d;
      }
      const oldest = before;
      before = previous;
      previous = current;
      current = oldest;
    }
    let best = n;
    for (let j = 0; j <= m; j++) best = Math.min(best, rows[previous + j]);
    return best;
  }
}

export function substringEditDistance(term: string, text: string, from: number): number {
  return new EditDistance().substring(term, text, from);
}
