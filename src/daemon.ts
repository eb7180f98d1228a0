import type { Readable, Writable } from "node:stream";
import { Dispatcher } from "./dispatcher.js";
import { LineReader, LineWriter } from "./protocol/framing.js";
import { Registry, readManifest } from "./registry.js";
import { debugSleepTool } from "./tools/debug-sleep.js";
import { TOOLS } from "./tools/index.js";
import { type WatcherEngine, Workspace } from "./workspace.js";

/** How long in-flight calls may run after stdin closes or SIGTERM before they are aborted. */
export const SHUTDOWN_GRACE_MS = 5_000;

export interface DaemonOptions {
  root: string;
  version: string;
  toolsFile?: string;
  watcher?: WatcherEngine;
  maxFileBytes?: number;
}

/** The process the Gateway spawns: reads calls from `input`, answers and pushes events on `output`. */
export class Daemon {
  private readonly registry: Registry;

  constructor(private readonly options: DaemonOptions) {
    // Both throw with a sentence for stderr: a bad root or --tools file stops the daemon before it says ready.
    const tools = process.env.TOOL_LAYER_DEBUG_TOOLS === "1" ? [...TOOLS, debugSleepTool] : TOOLS;
    this.registry = new Registry(tools, options.toolsFile ? readManifest(options.toolsFile, TOOLS) : undefined);
    this.ws = new Workspace({ root: options.root, watcher: options.watcher, maxFileBytes: options.maxFileBytes }, (event, data) => this.out?.write({ event, data }));
  }

  private readonly ws: Workspace;
  private out?: LineWriter;

  /** Resolves once input has ended (or SIGTERM came), in-flight calls are done and every child process is stopped. */
  async run(input: Readable, output: Writable): Promise<void> {
    const out = (this.out = new LineWriter(output));
    const dispatcher = new Dispatcher(this.registry, this.ws, out);
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    new LineReader(input, (line) => dispatcher.handleLine(line), () => dispatcher.overflow(), stop);
    const onSigterm = () => stop();
    process.once("SIGTERM", onSigterm);
    process.once("SIGINT", onSigterm);

    await this.ws.init();
    dispatcher.start(this.options.version);

    await stopped;
    process.off("SIGTERM", onSigterm);
    process.off("SIGINT", onSigterm);
    await dispatcher.drain(SHUTDOWN_GRACE_MS);
    await this.ws.dispose();
    await out.idle();
  }
}
