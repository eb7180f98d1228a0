import { describe, expect, test } from "vitest";
import { hasDisableUserns } from "../../src/terminal/sandbox-probe.js";
import {
  FALLBACK_HOME,
  PROC_READONLY,
  type SandboxOptions,
  buildSandbox,
  buildSandboxArgv,
  isSecretName,
  notFoundHint,
  sandboxEnv,
  sandboxHome,
} from "../../src/terminal/sandbox.js";

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
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      ...PROC_READONLY.flatMap((p) => ["--ro-bind-try", p, p]),
      "--perms",
      "1777",
      "--tmpfs",
      "/tmp",
      "--tmpfs",
      "/run",
      "--tmpfs",
      "/root",
      "--bind",
      "/work/ws",
      "/work/ws",
      "--ro-bind-try",
      "/work/ws/.git",
      "/work/ws/.git",
      "--chdir",
      "/work/ws",
      "--unshare-all",
      "--unshare-user",
      "--disable-userns",
      "--die-with-parent",
      "--new-session",
      "--cap-drop",
      "ALL",
      "--",
      "bash",
      "--noprofile",
      "--norc",
      "-c",
      "npm test",
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

  test("the folders between the workspace and a nested git dir are pinned as mount points, parents first, each once", () => {
    const gitDirs = ["/work/ws/.git", "/work/ws/build/inner/.git", "/work/ws/build/other/.git", "/work/ws/.git/modules/sub", "/work/ws/sub/.git"];
    const { argv, pins } = buildSandbox({ ...BASE, gitDirs });
    expect(pins).toEqual(["/work/ws/build", "/work/ws/sub", "/work/ws/build/inner", "/work/ws/build/other"]);
    const guard = argv.slice(indexOf(argv, "--bind", "/work/ws", "/work/ws") + 3, argv.indexOf("--chdir"));
    expect(guard).toEqual([
      "--ro-bind-try",
      "/work/ws/.git",
      "/work/ws/.git",
      "--bind-fd",
      "3",
      "/work/ws/build",
      "--bind-fd",
      "4",
      "/work/ws/sub",
      "--bind-fd",
      "5",
      "/work/ws/build/inner",
      "--bind-fd",
      "6",
      "/work/ws/build/other",
      "--ro-bind-try",
      "/work/ws/sub/.git",
      "/work/ws/sub/.git",
      "--ro-bind-try",
      "/work/ws/build/inner/.git",
      "/work/ws/build/inner/.git",
      "--ro-bind-try",
      "/work/ws/build/other/.git",
      "/work/ws/build/other/.git",
    ]); // .git/modules/sub is inside the read-only .git already
    // A git dir outside every writable place needs no pins: its folders are read-only already; nor does one where a
    // home bound from elsewhere shows other folders than its own above it.
    expect(buildSandbox({ ...BASE, gitDirs: ["/work/main/.git/worktrees/ws"] }).pins).toEqual([]);
    expect(buildSandbox({ ...BASE, home: "/data/h", gitDirs: ["/root/proj/.git"] }).pins).toEqual([]);
    expect(buildSandbox({ ...BASE, home: "/root", gitDirs: ["/root/proj/.git"] }).pins).toEqual(["/root/proj"]);
  });

  test("a hidden folder is covered wherever a bind shows it, read-only, with the folders above it in a chosen home pinned", () => {
    const state = "/data/h/.local/state/tool-layer";
    const { argv, pins } = buildSandbox({ ...BASE, home: "/data/h", hide: [state] });
    expect(indexOf(argv, "--tmpfs", state, "--remount-ro", state)).toBeGreaterThan(0); // through the read-only /
    expect(indexOf(argv, "--tmpfs", "/root/.local/state/tool-layer", "--remount-ro", "/root/.local/state/tool-layer")).toBeGreaterThan(
      indexOf(argv, "--bind", "/data/h", "/root"),
    );
    expect(pins).toEqual(["/data/h/.local", "/data/h/.local/state"]);
    expect(indexOf(argv, "--bind-fd", "3", "/root/.local")).toBeGreaterThan(0);
    // A home inside the state folder is hidden whole; one in the private /tmp hides nothing of the host's.
    const inside = buildSandbox({ ...BASE, home: `${state}/roots`, hide: [state] });
    expect(indexOf(inside.argv, "--tmpfs", "/root", "--remount-ro", "/root")).toBeGreaterThan(0);
    expect(inside.pins).toEqual([]);
    expect(buildSandboxArgv({ ...BASE, hide: ["/tmp/tool-layer-state"] })).not.toContain("/tmp/tool-layer-state");
  });

  test("a program not found where the sandbox shows nothing of the host's gets a hint; elsewhere none", () => {
    const { views } = buildSandbox({ ...BASE, root: "/tmp/ws", cwd: "/tmp/ws" });
    const path = "/tmp/tc/bin:/root/.cargo/bin:/usr/bin:/tmp/ws/node_modules/.bin";
    const bare = notFoundHint("bash: line 1: cargo: command not found\n", path, views, { homeFlag: true })!;
    expect(bare).toContain("/tmp is private in the sandbox");
    expect(bare).toContain("/tmp/tc/bin is not there");
    expect(bare).toContain("HOME (/root) is an empty folder in the sandbox (--terminal-home DIR binds a real one), so /root/.cargo/bin is not there");
    expect(bare).not.toContain("/tmp/ws/node_modules"); // the workspace is bound, also under /tmp
    expect(bare).toContain("--terminal-sandbox off");
    expect(notFoundHint("bash: line 1: /tmp/tc/bin/cc: No such file or directory\n", "/usr/bin", views, { homeFlag: true })).toContain(
      "/tmp/tc/bin/cc is not there",
    );
    expect(notFoundHint("/usr/bin/env: 'node': No such file or directory\n", "/tmp/n/bin:/usr/bin", views, { homeFlag: true })).toContain("/tmp/n/bin");
    expect(notFoundHint("bash: line 1: ./x: No such file or directory\n", "/tmp/tc/bin", views, { homeFlag: true })).toBeUndefined();
    expect(notFoundHint("bash: line 1: nope: command not found\n", "/usr/local/bin:/usr/bin", views, { homeFlag: true })).toBeUndefined();
    expect(notFoundHint("exit code 127 from /tmp/tc/bin/x\n", "/tmp/tc/bin", views, { homeFlag: true })).toBeUndefined();
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
    const a = buildSandboxArgv({
      ...BASE,
      tmpDir: "/var/lib/tl/tmp-1",
      hidden: ["/run", "/var/run"],
      keep: ["/run/systemd/resolve/stub-resolv.conf"],
      statusFd: 3,
    });
    expect(indexOf(a, "--bind", "/var/lib/tl/tmp-1", "/tmp")).toBeGreaterThan(0);
    expect(a).not.toContain("1777");
    expect(indexOf(a, "--tmpfs", "/var/run")).toBeGreaterThan(0);
    expect(indexOf(a, "--ro-bind", "/run/systemd/resolve/stub-resolv.conf", "/run/systemd/resolve/stub-resolv.conf")).toBeGreaterThan(
      indexOf(a, "--tmpfs", "/var/run"),
    );
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
    for (const k of [
      "EXA_API_KEY",
      "GH_TOKEN",
      "GITHUB_TOKEN",
      "NPM_TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "CLIENT_SECRET",
      "PGPASSWORD",
      "db_password",
      "SSH_AUTH_SOCK",
    ])
      expect(env, k).not.toHaveProperty(k);
    for (const k of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "BASH_ENV", "BASH_FUNC_ls%%"])
      expect(env, k).not.toHaveProperty(k);
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
    for (const n of ["OPENAI_API_KEY", "GH_TOKEN", "X_SECRET", "MYSQL_PASSWORD", "PASSWORD_FILE", "GITHUB_PAT", "EXA_API_KEY"])
      expect(isSecretName(n), n).toBe(true);
    for (const n of ["PATH", "KEYBOARD", "TOKENIZER", "SECRETARY", "HOME"]) expect(isSecretName(n), n).toBe(false);
  });
});
