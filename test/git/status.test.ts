import { describe, expect, it } from "vitest";
import { dirtyPaths, isClean, parseStatus } from "../../src/git/status.js";
import { parsePushPorcelain } from "../../src/git/push.js";

describe("parseStatus (git status --porcelain=v2 -z --branch)", () => {
  it("reads headers, ordinary, renamed, unmerged and untracked records, paths with spaces included", () => {
    const out = [
      "# branch.oid 0123456789abcdef0123456789abcdef01234567",
      "# branch.head main",
      "# branch.upstream origin/main",
      "# branch.ab +2 -1",
      "1 .M N... 100644 100644 100644 aaa bbb a file.txt",
      "1 A. N... 000000 100644 100644 000 ccc new.txt",
      "2 R. N... 100644 100644 100644 ddd ddd R100 new name.txt",
      "old name.txt",
      "u UU N... 100644 100644 100644 100644 e1 e2 e3 both sides.txt",
      "? untracked one.txt",
      "",
    ].join("\0");
    const s = parseStatus(out);
    expect(s).toMatchObject({ head: "0123456789abcdef0123456789abcdef01234567", branch: "main", upstream: "origin/main", ahead: 2, behind: 1 });
    expect(s.unstaged).toEqual([{ path: "a file.txt", xy: ".M" }]);
    expect(s.staged).toEqual([
      { path: "new.txt", xy: "A." },
      { path: "new name.txt", xy: "R.", from: "old name.txt" },
    ]);
    expect(s.conflicted).toEqual([{ path: "both sides.txt", xy: "UU" }]);
    expect(s.untracked).toEqual(["untracked one.txt"]);
    expect(isClean(s)).toBe(false);
    expect(dirtyPaths(s).sort()).toEqual(["a file.txt", "both sides.txt", "new name.txt", "new.txt"]);
  });

  it("an unborn, detached or clean repository", () => {
    expect(parseStatus("# branch.oid (initial)\0# branch.head main\0")).toMatchObject({ head: null, branch: "main", upstream: null, ahead: null });
    const detached = parseStatus("# branch.oid abc\0# branch.head (detached)\0");
    expect(detached.branch).toBe(null);
    expect(isClean(detached)).toBe(true);
  });
});

describe("parsePushPorcelain", () => {
  it("reads each ref line and ignores the rest", () => {
    const out = "To /tmp/remote\n \trefs/heads/main:refs/heads/main\t1a2b..3c4d\n!\trefs/heads/x:refs/heads/x\t[rejected] (fetch first)\nDone\n";
    expect(parsePushPorcelain(out)).toEqual([
      { flag: " ", from: "refs/heads/main", to: "refs/heads/main", summary: "1a2b..3c4d" },
      { flag: "!", from: "refs/heads/x", to: "refs/heads/x", summary: "[rejected] (fetch first)" },
    ]);
  });
});
