#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Daemon } from "./daemon.js";

const USAGE = "usage: tool-layer [--root DIR] [--tools FILE] [--watcher parcel|chokidar] [--max-file-bytes N]";

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

function parse() {
  const { values } = parseArgs({
    options: {
      root: { type: "string", default: process.cwd() },
      tools: { type: "string" },
      watcher: { type: "string", default: "parcel" },
      "max-file-bytes": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (values.watcher !== "parcel" && values.watcher !== "chokidar") throw new Error(`--watcher must be parcel or chokidar, not ${values.watcher}`);
  const maxFileBytes = values["max-file-bytes"] === undefined ? undefined : Number(values["max-file-bytes"]);
  if (maxFileBytes !== undefined && !(Number.isInteger(maxFileBytes) && maxFileBytes > 0)) throw new Error("--max-file-bytes must be a positive integer");
  return { root: values.root!, toolsFile: values.tools, watcher: values.watcher, maxFileBytes } as const;
}

let daemon: Daemon;
try {
  daemon = new Daemon({ ...parse(), version: version() });
} catch (e) {
  process.stderr.write(`tool-layer: ${e instanceof Error ? e.message : String(e)}\n${USAGE}\n`);
  process.exit(2);
}
daemon.run(process.stdin, process.stdout).then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`tool-layer: fatal: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  },
);
