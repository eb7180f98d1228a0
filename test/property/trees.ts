/**
 * Random small file trees for the property tests that compare the daemon with rg: names that exercise ignore rules and
 * globs (dotfiles, nested folders, brackets, spaces, a leading dash, non-ASCII), written into a fresh folder per run.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";

export interface TreeFile {
  /** Relative to the tree's folder, with `/`. */
  path: string;
  content: Buffer;
}

/** One name of a path: plain, hidden, with an extension, or awkward for a shell or a glob. */
export const segment: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[abc]{1,3}$/) },
  { weight: 3, arbitrary: fc.tuple(fc.stringMatching(/^[abc]{1,2}$/), fc.constantFrom("ts", "txt", "md", "log")).map(([n, e]) => `${n}.${e}`) },
  { weight: 2, arbitrary: fc.stringMatching(/^[abc]{1,2}$/).map((n) => `.${n}`) },
  { weight: 1, arbitrary: fc.constantFrom("a b", "-c", "[a]", "{b}", "é", "a,b", "!a", "#c", "a*", "ca.ts") },
  { weight: 1, arbitrary: fc.constantFrom("node_modules", "dist", "build", ".cache") }, // the VFS's defaults outside git
);

/** A relative path of one to three names. */
export const relPath: fc.Arbitrary<string> = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join("/"));

/** Files whose paths never make one file another's folder. */
export function treeOf(content: fc.Arbitrary<Buffer>, maxFiles = 10): fc.Arbitrary<TreeFile[]> {
  return fc
    .uniqueArray(fc.record({ path: relPath, content }), { minLength: 1, maxLength: maxFiles, selector: (f) => f.path })
    .map((files) => files.filter((f) => !files.some((g) => g.path.startsWith(`${f.path}/`))));
}

export function writeTree(dir: string, files: readonly TreeFile[]): void {
  for (const f of files) {
    const abs = path.join(dir, f.path);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, f.content);
  }
}

const RULES = ["*.log", "b/", "a", "!a.log", ".a", "*.md", "/c", "**/ab", "a*", "!ab", "*.txt", "[ab]", "node_modules/", "!dist"];

/**
 * The tree with up to two ignore files among its folders: mostly .gitignore, sometimes ripgrep's own .ignore or
 * .rgignore, which neither git nor the VFS reads. One whose folder is a file is dropped.
 */
export function withIgnoreFiles(tree: fc.Arbitrary<TreeFile[]>): fc.Arbitrary<TreeFile[]> {
  const ignoreFile = fc.record({
    dir: fc.constantFrom("", "a", "b", "ab"),
    name: fc.constantFrom(".gitignore", ".gitignore", ".gitignore", ".ignore", ".rgignore"),
    rules: fc.array(fc.constantFrom(...RULES), { minLength: 1, maxLength: 3 }),
  });
  return fc.tuple(tree, fc.array(ignoreFile, { maxLength: 2 })).map(([files, ignores]) => {
    const out = [...files];
    for (const { dir, name, rules } of ignores) {
      const rel = dir ? `${dir}/${name}` : name;
      if (out.some((f) => f.path === dir || f.path === rel || f.path.startsWith(`${rel}/`))) continue;
      out.push({ path: rel, content: Buffer.from(`${rules.join("\n")}\n`) });
    }
    return out;
  });
}
