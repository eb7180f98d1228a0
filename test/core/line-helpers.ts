import { FileVersions } from "../../src/core/file-versions.js";
import type { CrPolicy, LineSeq } from "../../src/core/line-diff.js";
import { splitText } from "../../src/core/text.js";

export const seq = (text: string): LineSeq => splitText(text);

/** A built version back to text. */
export const text = (v: LineSeq): string => v.lines.map((l, i) => l + v.eols[i]).join("");

export const versions = (head: string, index: string, worktree: string, cr?: CrPolicy) => new FileVersions(seq(head), seq(index), seq(worktree), cr);

/** A small deterministic PRNG (mulberry32), so a failing property case can be replayed from its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t >>> 0) % 4294967296) / 4294967296;
  };
}

/** Code-like lines with repeats (braces, blank lines) so diffs meet the ambiguous cases. */
const POOL = ["}", "", "  return x;", "  x += 1;", "function f() {", "  // note", "  if (a) {", "    b();", "  }", "const y = 2;"];

export function randomFile(r: () => number, n: number): string[] {
  return Array.from({ length: n }, () => (r() < 0.5 ? POOL[Math.floor(r() * POOL.length)] : `line ${Math.floor(r() * 1000)}`));
}

let serial = 0;
/** Lines that occur once: where a selection by line number is unambiguous across re-diffs (see stage-lines.ts). */
export function uniqueFile(n: number): string[] {
  return Array.from({ length: n }, () => `call(${serial++});`);
}

/** A few random edits: delete, insert, change a word, move a block, reindent; `unique` inserts only new lines. */
export function randomEdit(r: () => number, lines: string[], unique = false): string[] {
  const out = lines.slice();
  const edits = 1 + Math.floor(r() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(r() * (out.length + 1));
    const k = r();
    if (k < 0.2) out.splice(at, 1 + Math.floor(r() * 3));
    else if (k < 0.45) out.splice(at, 0, ...(unique ? uniqueFile(1 + Math.floor(r() * 3)) : randomFile(r, 1 + Math.floor(r() * 3))));
    else if (k < 0.7 && at < out.length) out[at] = out[at].replace(/\w+/, (w) => `${w}_${Math.floor(r() * 9)}`) || "new";
    else if (k < 0.85) {
      const moved = out.splice(at, 1 + Math.floor(r() * 3));
      out.splice(Math.floor(r() * (out.length + 1)), 0, ...moved);
    } else if (at < out.length) out[at] = `  ${out[at]}`;
  }
  return out;
}

/** Lines as a file, the final newline present or not. */
export const asText = (lines: string[], finalNewline = true, eol = "\n") => (lines.length ? lines.join(eol) + (finalNewline ? eol : "") : "");
