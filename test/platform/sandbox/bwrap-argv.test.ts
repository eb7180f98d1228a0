import { describe, expect, it } from "vitest";
import { lspPolicy } from "../../../src/lsp/sandbox.js";
import { PROC_READONLY, type SandboxPolicy, bwrapArgv } from "../../../src/platform/sandbox/bwrap-argv.js";
import { terminalPolicy } from "../../../src/terminal/sandbox.js";

/** What every sandbox starts with, whatever its policy. */
const FIXED_START = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...PROC_READONLY.flatMap((p) => ["--ro-bind-try", p, p])];
/** What every sandbox ends with before `--`: own namespaces, no capabilities, its own session, death with its parent. */
const FIXED_END = ["--die-with-parent", "--new-session", "--cap-drop", "ALL"];

describe("bwrapArgv: one bubblewrap command line from a policy (pure)", () => {
  it("a terminal command's: workspace writable, git dirs read-only with the folders above a nested one pinned, bash", () => {
    const policy = terminalPolicy({
      root: "/work/ws",
      gitDirs: ["/work/ws/lib/inner/.git", "/work/ws/.git"],
      homePath: "/root",
      network: false,
      cwd: "/work/ws/src",
      command: "npm test",
      hidden: ["/run"],
      disableUserns: true,
      hide: ["/root/.local/state/tool-layer"],
    });
    expect(bwrapArgv(policy)).toEqual({
      argv: [
        ...FIXED_START,
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
        "--bind-fd",
        "3",
        "/work/ws/lib",
        "--bind-fd",
        "4",
        "/work/ws/lib/inner",
        "--ro-bind-try",
        "/work/ws/lib/inner/.git",
        "/work/ws/lib/inner/.git",
        // The state folder lies under HOME, an empty tmpfs here: nothing shows it, nothing hides it.
        "--chdir",
        "/work/ws/src",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        ...FIXED_END,
        "--",
        "bash",
        "--noprofile",
        "--norc",
        "-c",
        "npm test",
      ],
      pins: ["/work/ws/lib", "/work/ws/lib/inner"],
      views: [
        { dest: "/", src: "/", writable: false },
        { dest: "/tmp", writable: true },
        { dest: "/run", writable: true },
        { dest: "/root", writable: true },
        { dest: "/work/ws", src: "/work/ws", writable: true },
      ],
    });
  });

  it("a custom check's: the terminal's sandbox around an argv, no shell; a state folder the workspace shows is covered", () => {
    const policy = terminalPolicy({
      root: "/work/ws",
      gitDirs: ["/work/ws/.git"],
      homePath: "/root",
      network: false,
      cwd: "/work/ws",
      command: ["npm", "run", "lint"],
      hidden: ["/run"],
      disableUserns: true,
      hide: ["/work/ws/.tool-layer"],
    });
    const { argv, pins } = bwrapArgv(policy);
    expect(argv).toEqual([
      ...FIXED_START,
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
      "--tmpfs",
      "/work/ws/.tool-layer",
      "--remount-ro",
      "/work/ws/.tool-layer",
      "--chdir",
      "/work/ws",
      "--unshare-all",
      "--unshare-user",
      "--disable-userns",
      ...FIXED_END,
      "--",
      "npm",
      "run",
      "lint",
    ]);
    expect(pins).toEqual([]);
  });

  it("a language server's: everything read-only but private tmpfs mounts, node_modules bound again, nothing pinned", () => {
    const policy = lspPolicy(
      {
        root: "/work/ws",
        keep: ["/opt/tl/node_modules", "/usr/local", "/work/ws"],
        hidden: ["/run", "/var/run"],
        disableUserns: false,
        hide: ["/work/ws/.tool-layer", "/tmp/state"],
      },
      "/usr/local/bin/node",
      ["server.js", "--stdio"],
    );
    const { argv, pins, views } = bwrapArgv(policy);
    expect(argv).toEqual([
      ...FIXED_START,
      "--perms",
      "1777",
      "--tmpfs",
      "/tmp",
      "--tmpfs",
      "/run",
      "--tmpfs",
      "/var/run",
      "--ro-bind",
      "/work/ws",
      "/work/ws",
      "--ro-bind",
      "/opt/tl/node_modules",
      "/opt/tl/node_modules",
      "--ro-bind",
      "/usr/local",
      "/usr/local",
      // /tmp/state is under the private /tmp: not shown, so not covered.
      "--tmpfs",
      "/work/ws/.tool-layer",
      "--remount-ro",
      "/work/ws/.tool-layer",
      "--chdir",
      "/work/ws",
      "--unshare-all",
      ...FIXED_END,
      "--",
      "/usr/local/bin/node",
      "server.js",
      "--stdio",
    ]);
    expect(pins).toEqual([]);
    expect(views.filter((v) => v.writable).map((v) => v.dest)).toEqual(["/tmp", "/run", "/var/run"]);
  });

  it("every kind of mount in policy order, the network and the status descriptor on request, the same line whatever order read-only folders come in", () => {
    const policy: SandboxPolicy = {
      mounts: [
        { kind: "bind", src: "/srv/tmp-1", dest: "/tmp", writable: true },
        { kind: "dir", dest: "/tmp/home" },
        { kind: "bind", src: "/srv/data", dest: "/data", writable: false },
        { kind: "tmpfs", dest: "/run" },
      ],
      readOnly: ["/srv/b/.git", "/srv/a/.git", "/srv/a/.git"],
      hide: [],
      cwd: "/tmp/home",
      network: true,
      disableUserns: true,
      statusFd: 5,
      command: ["true"],
    };
    const { argv, pins } = bwrapArgv(policy);
    expect(argv).toEqual([
      ...FIXED_START,
      "--bind",
      "/srv/tmp-1",
      "/tmp",
      "--dir",
      "/tmp/home",
      "--ro-bind",
      "/srv/data",
      "/data",
      "--tmpfs",
      "/run",
      // Sorted, each once; under the host's read-only / nothing needs pinning.
      "--ro-bind-try",
      "/srv/a/.git",
      "/srv/a/.git",
      "--ro-bind-try",
      "/srv/b/.git",
      "/srv/b/.git",
      "--chdir",
      "/tmp/home",
      "--unshare-all",
      "--unshare-user",
      "--disable-userns",
      "--share-net",
      ...FIXED_END,
      "--json-status-fd",
      "5",
      "--",
      "true",
    ]);
    expect(pins).toEqual([]);
    expect(bwrapArgv({ ...policy, readOnly: [...policy.readOnly].reverse() })).toEqual(bwrapArgv(policy));
  });
});
