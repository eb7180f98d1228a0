/**
 * Glob patterns as regular expressions, for find_file's `glob` (node's path.matchesGlob is still experimental on Node 20
 * and warns on stderr). The rules are gitignore's and ripgrep's: a pattern without `/` matches the file name at any
 * depth; with one, it matches the root-relative path. `*` and `?` stay within one folder, `**` spans folders,
 * `{a,b}` is a choice, `[abc]` a class.
 */

export function globToRegExp(glob: string): RegExp {
  const anchored = glob.includes("/");
  const source = translate(glob.startsWith("/") ? glob.slice(1) : glob);
  return new RegExp(anchored ? `^${source}$` : `(?:^|/)${source}$`);
}

/** A predicate over root-relative paths. */
export function globMatcher(glob: string): (path: string) => boolean {
  const re = globToRegExp(glob);
  return (path) => re.test(path);
}

function translate(glob: string): string {
  let out = "";
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const slashAfter = glob[i + 2] === "/";
        const atSegmentStart = i === 0 || glob[i - 1] === "/";
        if (atSegmentStart && slashAfter) {
          out += "(?:[^/]*/)*"; // `**/`: zero or more folders
          i += 2;
        } else {
          out += ".*";
          i += 1;
        }
      } else out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close < 0) out += "\\[";
      else {
        let body = glob.slice(i + 1, close).replace(/\\/g, "\\\\");
        if (body.startsWith("!")) body = `^${body.slice(1)}`;
        out += `[${body}]`;
        i = close;
      }
    } else if (c === "{") {
      braces++;
      out += "(?:";
    } else if (c === "}" && braces > 0) {
      braces--;
      out += ")";
    } else if (c === "," && braces > 0) out += "|";
    else if (c === "\\" && i + 1 < glob.length) out += escape(glob[++i]);
    else out += escape(c);
  }
  return out + ")".repeat(braces);
}

function escape(c: string): string {
  return /[.+*?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}
