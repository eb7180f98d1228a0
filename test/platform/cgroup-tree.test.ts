import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CgroupTree, ownV2Cgroup } from "../../src/platform/cgroup-tree.js";
import { alive, until, waitDead } from "../helpers/process.js";
import { tmpWorkspace } from "../helpers/tmp.js";

const HYBRID = [
  "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
  "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
].join("\n");

describe("the daemon's own cgroup v2", () => {
  it("is its 0:: path under the cgroup2 mount, on a hybrid host and a unified one", () => {
    expect(ownV2Cgroup(HYBRID, "8:pids:/\n1:cpu:/\n0::/\n")).toEqual({ dir: "/sys/fs/cgroup/unified" });
    const unified = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate";
    expect(ownV2Cgroup(unified, "0::/user.slice/app\\040one.scope\n")).toEqual({ dir: "/sys/fs/cgroup/user.slice/app\\040one.scope" });
  });

  it("is the one the daemon was in before it entered its tree", () => {
    expect(ownV2Cgroup(HYBRID, "0::/tool-layer-tree-12-1/daemon\n")).toEqual({ dir: "/sys/fs/cgroup/unified" });
    expect(ownV2Cgroup(HYBRID, "0::/a/b/tool-layer-tree-12-3/daemon\n")).toEqual({ dir: "/sys/fs/cgroup/unified/a/b" });
    expect(ownV2Cgroup(HYBRID, "0::/a/tool-layer-tree-12-3/c4\n")).toEqual({ dir: "/sys/fs/cgroup/unified/a/tool-layer-tree-12-3/c4" });
  });

  it("is missing, with a reason, when no cgroup2 is mounted or the daemon's cgroup is not under the mount", () => {
    expect(ownV2Cgroup("39 31 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids", "8:pids:/\n0::/\n")).toEqual({
      reason: "no cgroup v2 hierarchy is mounted",
    });
    expect(ownV2Cgroup(HYBRID, "8:pids:/\n")).toMatchObject({ reason: expect.stringContaining("no 0:: line") });
    const partial = "41 31 0:38 /docker/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
    expect(ownV2Cgroup(partial, "0::/elsewhere\n")).toEqual({ reason: "the daemon's cgroup /elsewhere is not visible under /sys/fs/cgroup" });
  });
});

describe("the supervisor's cgroup tree", () => {
  it("degrades to process groups, saying why once, where a cgroup cannot be made or has no cgroup.kill", () => {
    const plain = tmpWorkspace(); // a folder that is no cgroup: mkdir works, cgroup.kill never appears
    try {
      const cases: [{ dir: string } | { reason: string }, RegExp][] = [
        [{ reason: "no cgroup v2 hierarchy is mounted" }, /: no cgroup v2 hierarchy is mounted$/],
        [{ dir: "/proc/no-such-cgroup" }, /: cannot create a cgroup under \/proc\/no-such-cgroup: ENOENT/],
        [{ dir: plain.dir }, /: cannot create a cgroup under .*: the kernel has no cgroup\.kill \(Linux 5\.14 and later\)$/],
      ];
      for (const [own, reason] of cases) {
        const said: string[] = [];
        const tree = new CgroupTree((m) => said.push(m), own);
        tree.enter();
        expect(tree.start("true", [], { PATH: "/usr/bin:/bin" }, "/", (cmd, args) => spawnSync(cmd, args).status)).toEqual({ value: 0 }); // it ran, in no leaf
        expect(tree.state()).toMatchObject({ kind: "process-group" });
        expect(said).toEqual([
          expect.stringMatching(/^child processes are contained by their process group only; one that starts a session of its own \(setsid\)/),
        ]);
        expect(said[0]).toMatch(reason);
      }
    } finally {
      plain.cleanup();
    }
  });

  it("once entered, the daemon and every child it forks are in the tree; close() steps out and kills what they left", async () => {
    const cgroupOf = (pid: number) =>
      readFileSync(`/proc/${pid}/cgroup`, "utf8")
        .split("\n")
        .find((l) => l.startsWith("0::"))!
        .slice(3);
    const mine = cgroupOf(process.pid);
    const tree = new CgroupTree();
    tree.enter();
    const state = tree.state();
    if (state.kind !== "cgroup") throw new Error(state.reason);
    const inside = `${mine === "/" ? "" : mine}/${path.basename(state.tree)}/daemon`;
    let escaped: number | undefined;
    try {
      expect(cgroupOf(process.pid)).toBe(inside);
      // A short-lived child (a hook under git) that leaves a grandchild in a session of its own.
      escaped = Number(spawnSync("sh", ["-c", "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!"], { encoding: "utf8" }).stdout);
      expect(cgroupOf(escaped)).toBe(inside);
    } finally {
      await tree.close();
    }
    expect(cgroupOf(process.pid)).toBe(mine);
    await waitDead(escaped!);
    expect(existsSync(state.tree)).toBe(false);
  });

  it("kills and removes the tree of a daemon that died with its watchdog", async () => {
    const own = ownV2Cgroup(readFileSync("/proc/self/mountinfo", "utf8"), readFileSync("/proc/self/cgroup", "utf8"));
    if (!("dir" in own)) throw new Error(own.reason);
    // Named after a process alive while the tree is set up: a daemon of another test file starting meanwhile sweeps the
    // trees of dead pids, and would take this one before its leftover joined (seen in CI). Stale once the holder dies.
    const holder = spawn("sleep", ["60"], { stdio: "ignore" });
    const stale = path.join(own.dir, `tool-layer-tree-${holder.pid}-1`);
    mkdirSync(path.join(stale, "c1"), { recursive: true });
    const left = spawn("sh", ["-c", 'echo $$ > "$1"; exec sleep 30', "sh", path.join(stale, "c1", "cgroup.procs")], { stdio: "ignore" });
    try {
      await until(() => readFileSync(path.join(stale, "c1", "cgroup.procs"), "utf8").trim() === String(left.pid), "the leftover to join");
      holder.kill("SIGKILL");
      await waitDead(holder.pid!);
      const tree = new CgroupTree();
      tree.start("true", [], { PATH: "/usr/bin:/bin" }, "/", (cmd, args) => spawnSync(cmd, args)); // the first leaf makes the tree
      await waitDead(left.pid!);
      await until(() => !existsSync(stale), "the stale tree to go");
      await tree.close();
    } finally {
      if (alive(left.pid!)) left.kill("SIGKILL");
      if (alive(holder.pid!)) holder.kill("SIGKILL");
    }
  });
});
