/**
 * The watcher host's `drained` (src/vfs/watcher-host.ts, host-threads.ts): the quiet settle after a terminal_run ends on
 * it. It says parcel's threads were asleep only when they were, and then the batch of a file written just before is
 * already in.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import watcher from "@parcel/watcher";
import { afterAll, describe, expect, it } from "vitest";
import { Supervisor } from "../../src/platform/supervisor.js";
import { parcelThreadsAsleep } from "../../src/vfs/host-threads.js";
import { WatcherHost } from "../../src/vfs/watcher-client.js";
import { builtMain } from "../helpers/built.js";
import { until } from "../helpers/process.js";

/** Fresh hosts, each quiet (parcel hands a quiet watcher's first event over at once, not in its 50 ms batch). */
const HOSTS = 12;

const dir = mkdtempSync(path.join(os.tmpdir(), "tool-layer-drained-"));
const supervisor = new Supervisor();
afterAll(async () => {
  await supervisor.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("parcelThreadsAsleep", () => {
  it("is false without parcel's poll thread and while another thread runs; true once parcel's threads sleep", async () => {
    expect(parcelThreadsAsleep()).toBe(false); // no parcel in this process yet
    const sub = await watcher.subscribe(dir, () => undefined);
    try {
      await until(parcelThreadsAsleep, "parcel's threads asleep");
      const spinner = new Worker("require('worker_threads').parentPort.postMessage('spinning'); for (;;) {}", { eval: true });
      try {
        await new Promise((resolve) => spinner.once("message", resolve));
        for (let look = 0; look < 20; look++) expect(parcelThreadsAsleep()).toBe(false);
      } finally {
        await spinner.terminate();
      }
      await until(parcelThreadsAsleep, "parcel's threads asleep after the spinner");
    } finally {
      await sub.unsubscribe();
    }
  });
});

describe("the watcher host's drained", () => {
  it("answers after the batch of a file written just before the ask", async () => {
    builtMain(); // the host runs from dist/
    // false is an allowed answer (threads not seen asleep within its 50 ms, on a loaded machine: the daemon then waits
    // as before); what must hold is that a true comes only once the batch is in, and that true does come
    let sure = 0;
    for (let i = 0; i < HOSTS; i++) {
      const host = new WatcherHost(supervisor, dir, () => undefined);
      const seen: string[] = [];
      try {
        await host.subscribe(dir, (err, events) => seen.push(...(err ? [] : events.map((e) => path.basename(e.path)))), { ignore: [] });
        const name = `written-${i}.txt`;
        writeFileSync(path.join(dir, name), "w\n");
        if (await host.drained()) {
          sure++;
          expect(seen).toContain(name);
        }
      } finally {
        host.close();
      }
    }
    expect(sure, `drained() said true for ${sure} of ${HOSTS} hosts`).toBeGreaterThan(0);
  });
});
