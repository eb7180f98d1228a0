import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * A `git` put first on the daemon's PATH that records each `git status` run (its pid, a line in a file) and passes
 * everything else to the real git. While held, a status runs the real git at once but keeps its output back until
 * release(): the run then stays in flight for as long as a test needs, with an answer that reflects the disk as it was.
 */
export function countingGit() {
  const dir = mkdtempSync(path.join(tmpdir(), "tool-layer-git-"));
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  const runs = path.join(dir, "runs");
  const hold = path.join(dir, "hold");
  const script = `#!/bin/sh
case " $* " in
  *" status "*)
    if [ -e '${hold}' ]; then
      '${real}' "$@" > '${dir}'/out.$$; code=$?
      echo $$ >> '${runs}'
      while [ -e '${hold}' ]; do sleep 0.02; done
      cat '${dir}'/out.$$; rm -f '${dir}'/out.$$; exit $code
    fi
    echo $$ >> '${runs}' ;;
esac
exec '${real}' "$@"
`;
  writeFileSync(path.join(dir, "git"), script);
  chmodSync(path.join(dir, "git"), 0o755);
  const pids = () => (existsSync(runs) ? readFileSync(runs, "utf8").split("\n").filter(Boolean).map(Number) : []);
  return {
    /** For the daemon's environment. */
    env: { PATH: `${dir}${path.delimiter}${process.env.PATH ?? ""}` },
    /** The pids of the `git status` runs so far (a held one is listed once its output is ready). */
    pids,
    statusRuns: () => pids().length,
    hold: () => writeFileSync(hold, ""),
    release: () => rmSync(hold, { force: true }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
