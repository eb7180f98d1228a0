import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import {
  CgroupReserve,
  CommandCgroup,
  DEFAULT_PIDS_MAX,
  cgroupParents,
  commandCgroupName,
  commandCgroupPid,
  defaultLimits,
  heldBwrapArgv,
  hostCgroupParents,
} from "../../src/terminal/cgroup-limits.js";

const V1_MOUNTS = [
  "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct",
  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
].join("\n");

describe("cgroup parents", () => {
  test("cgroup v1: each controller's own hierarchy, at the daemon's own cgroup in it", () => {
    const self = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/\n0::/\n";
    expect(cgroupParents(V1_MOUNTS, self)).toEqual({ version: 1, pids: "/sys/fs/cgroup/pids", memory: "/sys/fs/cgroup/memory/process_api/abc" });
  });

  test("cgroup v2 alone: the daemon's cgroup in the unified hierarchy", () => {
    const mounts = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate";
    expect(cgroupParents(mounts, "0::/system.slice/tool-layer.service\n")).toEqual({
      version: 2,
      pids: "/sys/fs/cgroup/system.slice/tool-layer.service",
      memory: "/sys/fs/cgroup/system.slice/tool-layer.service",
    });
  });

  test("a mount of part of the hierarchy (a container) and paths with escaped spaces", () => {
    const mounts = "39 31 0:36 /docker/c1 /sys/fs/cgroup/my\\040pids rw - cgroup cgroup rw,pids";
    expect(cgroupParents(mounts, "8:pids:/docker/c1/job\n")).toEqual({ version: 1, pids: "/sys/fs/cgroup/my pids/job" });
    // Our cgroup outside what the mount shows: not usable.
    expect(cgroupParents(mounts, "8:pids:/other\n").pids).toBeUndefined();
  });

  test("nothing mounted: a reason", () => {
    expect(cgroupParents("23 1 0:2 / / rw - ext4 /dev/root rw", "0::/\n")).toEqual({
      reason: "no cgroup hierarchy with the pids or memory controller is mounted",
    });
  });

  test("default limits: a fixed task bound, half the memory up to 8 GiB", () => {
    expect(defaultLimits(4 * 2 ** 30)).toEqual({ pids: DEFAULT_PIDS_MAX, memoryBytes: 2 * 2 ** 30 });
    expect(defaultLimits(64 * 2 ** 30).memoryBytes).toBe(8 * 2 ** 30);
  });

  test("wrap: joins every cgroup, then runs the command as given", () => {
    const g = new CommandCgroup(["/sys/fs/cgroup/pids/tl-1", "/sys/fs/cgroup/memory/x/tl-1"]);
    const argv = g.wrap(["bwrap", "--", "bash", "-c", "echo -- $1"]);
    expect(argv.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    expect(argv.slice(3)).toEqual([
      "sh",
      "/sys/fs/cgroup/pids/tl-1/cgroup.procs",
      "/sys/fs/cgroup/memory/x/tl-1/cgroup.procs",
      "--",
      "bwrap",
      "--",
      "bash",
      "-c",
      "echo -- $1",
    ]);
  });
});

describe("held bwrap", () => {
  test("--info-fd and --block-fd go before the rest, on the two descriptors after the pins", () => {
    expect(heldBwrapArgv(["bwrap", "--ro-bind", "/", "/", "--", "bash", "-c", "true"], 5)).toEqual([
      "bwrap",
      "--info-fd",
      "5",
      "--block-fd",
      "6",
      "--ro-bind",
      "/",
      "/",
      "--",
      "bash",
      "-c",
      "true",
    ]);
  });
});

const parents = await hostCgroupParents();
/** This process's command cgroups under the parents now. */
const ours = () =>
  [...new Set([parents.pids, parents.memory])]
    .filter((d): d is string => !!d)
    .flatMap((d) =>
      readdirSync(d)
        .filter((e) => commandCgroupPid(e) === process.pid)
        .map((e) => path.join(d, e)),
    );

describe.skipIf(!!parents.reason)(`the cgroup reserve (${parents.reason ?? "cgroups here"})`, () => {
  test("takes fresh cgroups with the limits, makes the next ahead, and removes the one left on close", async () => {
    const before = ours();
    const reserve = new CgroupReserve(parents, { pids: 77, memoryBytes: 2 ** 30 });
    reserve.warm();
    const first = await reserve.take();
    const second = await reserve.take();
    expect(second.dirs).not.toEqual(first.dirs);
    for (const d of [...first.dirs, ...second.dirs]) expect(existsSync(d)).toBe(true);
    const pidsDir = [...first.dirs, ...second.dirs].find((d) => existsSync(path.join(d, "pids.max")));
    if (pidsDir) expect(readFileSync(path.join(pidsDir, "pids.max"), "utf8").trim()).toBe("77");
    await Promise.all([first.release(), second.release()]);
    await reserve.close(); // the one made ahead after the second take
    expect(ours()).toEqual(before);
    reserve.warm(); // closed: makes none
    expect(ours()).toEqual(before);
  });
});

describe("command cgroup names", () => {
  test("differ for each command of one daemon and carry its pid for the sweep", () => {
    const names = Array.from({ length: 1000 }, () => commandCgroupName(4242));
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(commandCgroupPid(n), n).toBe(4242);
    expect(commandCgroupPid("tool-layer-4242-7")).toBe(4242);
    expect(commandCgroupPid("tool-layer-tree-4242-7")).toBeUndefined();
    expect(commandCgroupPid("user.slice")).toBeUndefined();
  });
});
