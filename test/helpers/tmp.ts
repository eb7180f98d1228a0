import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A fresh temporary folder (a git repository when `git`), removed by `cleanup()`. */
export function tmpWorkspace(opts: { git?: boolean; files?: Record<string, string | Buffer> } = {}) {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-test-")));
  if (opts.git) {
    git(dir, "init", "-q", "-b", "main");
    git(dir, "config", "user.email", "test@example.com");
    git(dir, "config", "user.name", "Test");
    git(dir, "config", "commit.gpgsign", "false");
  }
  for (const [rel, content] of Object.entries(opts.files ?? {})) writeFile(dir, rel, content);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function writeFile(dir: string, rel: string, content: string | Buffer): void {
  const abs = path.join(dir, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, content);
}

/** Runs git in `dir`; its stderr is kept (in the error, when it fails) instead of reaching the test run's. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd: dir, encoding: "utf8", stdio: "pipe", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
}
