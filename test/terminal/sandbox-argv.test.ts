import { describe, expect, test } from "vitest";
import { hasDisableUserns } from "../../src/terminal/sandbox-probe.js";
import { FALLBACK_HOME, PROC_READONLY, type SandboxOptions, buildSandboxArgv, isSecretName, sandboxEnv, sandboxHome } from "../../src/terminal/sandbox.js";

const BASE: SandboxOptions = { root: "/work/ws", gitDirs: ["/work/ws/.git"], homePath: "/root", network: false, cwd: "/work/ws", command: "npm test" };

/** The argv as its options in pairs/triples, for asserting order without restating the whole line. */
function indexOf(argv: string[], ...seq: string[]): number {
  for (let i = 0; i + seq.length <= argv.length; i++) if (seq.every((s, k) => argv[i + k] === s)) return i;
  return -1;
}

describe("sandbox argv", () => {
  test("the whole line for a plain workspace", () => {
    expect(buildSandboxArgv(BASE)).toEqual([
      "bwrap",
      "--ro-bind", "/", "/",
      "--dev", "/dev",
      "--proc", "/proc",
      ...PROC_READONLY.flatMap((p) => ["--ro-bind-try", p, p]),
      "--perms", "1777", "--tmpfs", "/tmp",
      "--tmpfs", "/run",
      "--tmpfs", "/root",
      "--bind", "/work/ws", "/work/ws",
      "--ro-bind-try", "/work/ws/.git", "/work/ws/.git",
      "--chdir", "/work/ws",
      "--unshare-all",
      "--unshare-user", "--disable-userns",
      "--die-with-parent", "--new-session", "--cap-drop", "ALL",
      "--", "bash", "--noprofile", "--norc", "-c", "npm test",
    ]);
  });

  test("network only on request", () => {
    expect(buildSandboxArgv(BASE)).not.toContain("--share-net");
    const a = buildSandboxArgv({ ...BASE, network: true });
    expect(indexOf(a, "--disable-userns", "--share-net")).toBeGreaterThan(0);
  });

  test("nested user namespaces are blocked unless the probe found bwrap too old for it", () => {
    expect(buildSandboxArgv({ ...BASE, disableUserns: false })).not.toContain("--disable-userns");
    expect(hasDisableUserns("bubblewrap 0.8.0")).toBe(true);
    expect(hasDisableUserns("bubblewrap 0.11.0")).toBe(true);
    expect(hasDisableUserns("bubblewrap 1.0")).toBe(true);
    expect(hasDisableUserns("bubblewrap 0.6.1")).toBe(false);
  });

  test("the workspace is bound after /tmp and HOME, so one living under either is not hidden by their tmpfs", () => {
    const a = buildSandboxArgv({ ...BASE, root: "/tmp/ws", cwd: "/tmp/ws/src", gitDirs: [] });
    expect(indexOf(a, "--tmpfs", "/tmp")).toBeLessThan(indexOf(a, "--bind", "/tmp/ws", "/tmp/ws"));
    const b = buildSandboxArgv({ ...BASE, root: "/root/proj", cwd: "/root/proj", gitDirs: [] });
    expect(indexOf(b, "--tmpfs", "/root")).toBeLessThan(indexOf(b, "--bind", "/root/proj", "/root/proj"));
    expect(indexOf(b, "--chdir", "/root/proj")).toBeGreaterThan(0);
  });

  test("every git dir, nested and linked ones too, is bound read-only after the workspace, each once", () => {
    const gitDirs = ["/work/ws/sub/.git", "/work/ws/.git", "/work/ws/.git", "/work/main/.git/worktrees/ws", "/work/ws/vendor/lib/.git"];
    const a = buildSandboxArgv({ ...BASE, gitDirs });
    const root = indexOf(a, "--bind", "/work/ws", "/work/ws");
    for (const g of new Set(gitDirs)) {
      expect(indexOf(a, "--ro-bind-try", g, g)).toBeGreaterThan(root);
      expect(a.filter((x) => x === g)).toHaveLength(2);
    }
  });

  test("HOME: an empty tmpfs, a chosen folder, or an empty folder in /tmp when the home is the workspace", () => {
    expect(indexOf(buildSandboxArgv(BASE), "--tmpfs", "/root")).toBeGreaterThan(0);
    const chosen = buildSandboxArgv({ ...BASE, home: "/srv/agent-home" });
    expect(indexOf(chosen, "--bind", "/srv/agent-home", "/root")).toBeGreaterThan(0);
    expect(chosen).not.toContain("/root/");
    const inside = { ...BASE, homePath: "/work/ws" };
    expect(sandboxHome(inside)).toBe(FALLBACK_HOME);
    expect(sandboxHome({ ...BASE, homePath: "/work/ws/home" })).toBe(FALLBACK_HOME);
    expect(sandboxHome({ ...BASE, homePath: "/" })).toBe(FALLBACK_HOME);
    expect(sandboxHome({ ...BASE, homePath: "/work/ws-home" })).toBe("/work/ws-home"); // a sibling sharing a prefix
    const a = buildSandboxArgv(inside);
    expect(indexOf(a, "--dir", FALLBACK_HOME)).toBeGreaterThan(indexOf(a, "--tmpfs", "/tmp"));
    expect(a.slice(0, indexOf(a, "--bind", "/work/ws", "/work/ws"))).not.toContain("/work/ws");
  });

  test("a host folder as /tmp, hidden dirs with paths kept, a status descriptor", () => {
    const a = buildSandboxArgv({ ...BASE, tmpDir: "/var/lib/tl/tmp-1", hidden: ["/run", "/var/run"], keep: ["/run/systemd/resolve/stub-resolv.conf"], statusFd: 3 });
    expect(indexOf(a, "--bind", "/var/lib/tl/tmp-1", "/tmp")).toBeGreaterThan(0);
    expect(a).not.toContain("1777");
    expect(indexOf(a, "--tmpfs", "/var/run")).toBeGreaterThan(0);
    expect(indexOf(a, "--ro-bind", "/run/systemd/resolve/stub-resolv.conf", "/run/systemd/resolve/stub-resolv.conf")).toBeGreaterThan(indexOf(a, "--tmpfs", "/var/run"));
    expect(indexOf(a, "--json-status-fd", "3")).toBeLessThan(a.indexOf("--"));
  });

  test("the command is one argument after --, whatever it contains", () => {
    const command = "--help; echo '$(x)' \"a b\"\nnext line";
    const a = buildSandboxArgv({ ...BASE, command });
    expect(a.slice(a.indexOf("--"))).toEqual(["--", "bash", "--noprofile", "--norc", "-c", command]);
  });

  test("relative paths are a programming error", () => {
    expect(() => buildSandboxArgv({ ...BASE, root: "ws" })).toThrow(/root must be absolute/);
    expect(() => buildSandboxArgv({ ...BASE, cwd: "src" })).toThrow(/cwd must be absolute/);
  });
});

describe("sandbox environment", () => {
  const base = {
    PATH: "/usr/bin:/bin",
    LANG: "C.UTF-8",
    EXA_API_KEY: "exa",
    GH_TOKEN: "gh",
    GITHUB_TOKEN: "ghs",
    NPM_TOKEN: "npm",
    AWS_SECRET_ACCESS_KEY: "aws",
    CLIENT_SECRET: "s",
    PGPASSWORD: "pg",
    db_password: "db",
    SSH_AUTH_SOCK: "/run/user/0/agent",
    GIT_DIR: "/elsewhere/.git",
    GIT_WORK_TREE: "/elsewhere",
    GIT_INDEX_FILE: "/elsewhere/index",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "core.hooksPath",
    GIT_CONFIG_VALUE_0: "/x",
    BASH_ENV: "/work/ws/.bashrc",
    "BASH_FUNC_ls%%": "() { rm -rf /; }",
    PAGER: "less",
    EDITOR: "vim",
    HOME: "/root",
    KEYBOARD: "us", // not a secret: the pattern is a suffix
  };

  test("secrets, repository variables and startup code are withheld; the rest is passed", () => {
    const env = sandboxEnv({ base, home: "/root" });
    for (const k of ["EXA_API_KEY", "GH_TOKEN", "GITHUB_TOKEN", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "CLIENT_SECRET", "PGPASSWORD", "db_password", "SSH_AUTH_SOCK"]) expect(env, k).not.toHaveProperty(k);
    for (const k of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "BASH_ENV", "BASH_FUNC_ls%%"]) expect(env, k).not.toHaveProperty(k);
    expect(env).toMatchObject({ PATH: "/usr/bin:/bin", LANG: "C.UTF-8", KEYBOARD: "us" });
  });

  test("no pager, editor or prompt; HOME and TMPDIR are the sandbox's", () => {
    const env = sandboxEnv({ base, home: FALLBACK_HOME });
    expect(env).toMatchObject({ PAGER: "cat", GIT_PAGER: "cat", EDITOR: ":", GIT_EDITOR: ":", GIT_TERMINAL_PROMPT: "0", HOME: FALLBACK_HOME, TMPDIR: "/tmp" });
    expect(env).not.toHaveProperty("CI");
  });

  test("--terminal-env passes a secret through on purpose, never a repository variable", () => {
    const env = sandboxEnv({ base, home: "/root", passThrough: ["NPM_TOKEN", "GIT_DIR"] });
    expect(env.NPM_TOKEN).toBe("npm");
    expect(env).not.toHaveProperty("GIT_DIR");
  });

  test("the call's env comes last: the caller's explicit choice", () => {
    const env = sandboxEnv({ base, home: "/root", callEnv: { CI: "1", PAGER: "less", MY_TOKEN: "given" } });
    expect(env).toMatchObject({ CI: "1", PAGER: "less", MY_TOKEN: "given" });
  });

  test("secret names", () => {
    for (const n of ["OPENAI_API_KEY", "GH_TOKEN", "X_SECRET", "MYSQL_PASSWORD", "PASSWORD_FILE", "GITHUB_PAT", "EXA_API_KEY"]) expect(isSecretName(n), n).toBe(true);
    for (const n of ["PATH", "KEYBOARD", "TOKENIZER", "SECRETARY", "HOME"]) expect(isSecretName(n), n).toBe(false);
  });
});
