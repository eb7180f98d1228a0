import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tagOf } from "../src/core/hash.js";

const DOCS = path.join(__dirname, "../docs");

/** A rendered line `N|TAG content`, maybe after `path:` (lsp results), as docs show them. */
const RENDERED = /^\s*(?:[\w./-]+:)?\d+\|([0-9A-F]{4}) (.*)$/;
/** A JSON string literal, whose value may hold rendered lines (a `text` field, a conflict block's sides). */
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;

/** Lines whose tag is not of the text shown: bytes the text cannot show, or a line shown cut. */
const UNSHOWABLE = /\[not UTF-8|\[line cut/;

interface Example {
  file: string;
  tag: string;
  content: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? markdownFiles(p) : e.name.endsWith(".md") ? [p] : [];
  });
}

/** Every rendered line of a doc: in code blocks (raw or inside JSON strings) and in inline code. */
function examples(file: string): Example[] {
  const out: Example[] = [];
  const take = (line: string) => {
    const m = RENDERED.exec(line);
    if (m && !UNSHOWABLE.test(m[2])) out.push({ file: path.relative(DOCS, file), tag: m[1], content: m[2] });
    return m !== null;
  };
  let inBlock = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trimStart().startsWith("```")) {
      inBlock = !inBlock;
      continue;
    }
    if (inBlock) {
      if (take(line)) continue;
      for (const literal of line.match(JSON_STRING) ?? []) for (const l of (JSON.parse(literal) as string).split("\n")) take(l);
    } else {
      for (const span of line.match(/`[^`]+`/g) ?? []) take(span.slice(1, -1));
    }
  }
  return out;
}

/** The new side of a word diff (`[-old-]{+new+}`, git_word_diff's rendering): what the tag is of. */
function newSide(content: string): string {
  return content.replace(/\[-.*?-\]/g, "").replace(/\{\+(.*?)\+\}/g, "$1");
}

describe("the docs' examples", () => {
  it("show each line with the tag SPEC 4's rule gives it", () => {
    const all = markdownFiles(DOCS).flatMap(examples);
    expect(all.length).toBeGreaterThan(40); // the parser still finds them
    const wrong = all
      .filter((e) => tagOf(e.content) !== e.tag && tagOf(newSide(e.content)) !== e.tag)
      .map((e) => `${e.file}: ${e.tag} ${JSON.stringify(e.content)} is ${tagOf(newSide(e.content))}`);
    expect(wrong).toEqual([]);
  });
});
