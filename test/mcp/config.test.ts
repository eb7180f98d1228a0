import path from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical-json.js";
import {
  DEFAULT_TOOL_TIMEOUT_MS,
  type McpConfig,
  type ParseOptions,
  describeEntry,
  entryDigest,
  expandVars,
  REDACT_MIN_CHARS,
  mergeMcpConfigs,
  parseMcpConfig,
  redact,
} from "../../src/mcp/config.js";
import { loadMcpConfig, loadWorkspaceConfig } from "../../src/mcp/load-config.js";
import { tmpWorkspace } from "../helpers/tmp.js";

const opts = (over: Partial<ParseOptions> = {}): ParseOptions => ({ source: "workspace", file: ".mcp.json", root: "/ws", env: {}, ...over });
const parse = (cfg: unknown, over: Partial<ParseOptions> = {}): McpConfig => parseMcpConfig(JSON.stringify(cfg), opts(over));

describe("parseMcpConfig", () => {
  it("reads stdio and HTTP entries in the shape MCP clients use", () => {
    const cfg = parse({
      mcpServers: {
        files: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."], env: { DEBUG: "1" } },
        typed: { type: "stdio", command: "srv", cwd: "tools", timeout_ms: 5000 },
        remote: { type: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer t" } },
        streamable: { type: "streamable-http", url: "http://127.0.0.1:3000/mcp" },
        old: { type: "sse", url: "http://127.0.0.1:3001/sse" },
        untyped: { url: "http://127.0.0.1:3002/mcp" },
      },
    });
    expect(cfg.problems).toEqual([]);
    const [files, typed, remote, streamable, old, untyped] = cfg.servers;
    expect(files).toMatchObject({
      name: "files",
      source: "workspace",
      transport: "stdio",
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "."],
      env: { DEBUG: "1" },
      cwd: "/ws",
      timeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
    });
    expect(typed).toMatchObject({ transport: "stdio", args: [], env: {}, cwd: "/ws/tools", timeoutMs: 5000 });
    expect(remote).toMatchObject({ transport: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer t" } });
    expect(streamable.transport).toBe("http");
    expect(old.transport).toBe("sse");
    expect(untyped.transport).toBe("http");
  });

  it("expands ${VAR} and ${VAR:-default} in command, args, env, cwd, url and headers", () => {
    const env = { HOME: "/home/u", TOKEN: "s3cret", EMPTY: "" };
    const cfg = parse(
      {
        mcpServers: {
          a: { command: "${HOME}/bin/srv", args: ["--port", "${PORT:-8080}", "--empty=${EMPTY:-fallback}", "$HOME"], env: { T: "${TOKEN}" }, cwd: "${HOME}/w" },
          b: { url: "${BASE:-http://127.0.0.1:9000}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
        },
      },
      { env },
    );
    expect(cfg.problems).toEqual([]);
    expect(cfg.servers[0]).toMatchObject({
      command: "/home/u/bin/srv",
      args: ["--port", "8080", "--empty=fallback", "$HOME"],
      env: { T: "s3cret" },
      cwd: "/home/u/w",
    });
    expect(cfg.servers[1]).toMatchObject({ url: "http://127.0.0.1:9000/mcp", headers: { Authorization: "Bearer s3cret" } });
  });

  it("an unset variable without default is a problem for that server alone, naming the variable and the field", () => {
    const cfg = parse({ mcpServers: { bad: { command: "srv", args: ["${NOPE}"] }, good: { command: "ok" } } });
    expect(cfg.servers.map((s) => s.name)).toEqual(["good"]);
    expect(cfg.problems).toHaveLength(1);
    expect(cfg.problems[0].server).toBe("bad");
    expect(cfg.problems[0].message).toContain("${NOPE} is not set");
    expect(cfg.problems[0].message).toContain("args[0]");
    expect(cfg.problems[0].message).toContain("${NOPE:-default}");
  });

  it("explains bad entries field by field", () => {
    const cfg = parse({
      mcpServers: {
        noCommand: { args: ["x"] },
        emptyCommand: { command: "" },
        numArg: { command: "srv", args: ["--n", 3] },
        numEnv: { command: "srv", env: { N: 3 } },
        badUrl: { type: "http", url: "ftp://x" },
        badType: { type: "websocket", url: "http://x" },
        badTimeout: { command: "srv", timeout_ms: -1 },
        notObject: "srv --stdio",
      },
    });
    expect(cfg.servers).toEqual([]);
    const msg = Object.fromEntries(cfg.problems.map((p) => [p.server, p.message]));
    expect(msg.noCommand).toContain('needs "command"');
    expect(msg.emptyCommand).toContain("command must name the program");
    expect(msg.numArg).toContain("args.1 every argument must be a string");
    expect(msg.numEnv).toContain("env.N must be a string");
    expect(msg.badUrl).toContain("http:// or https://");
    expect(msg.badType).toContain('type must be "stdio", "http", "streamable-http" or "sse"');
    expect(msg.badTimeout).toContain("timeout_ms");
    expect(msg.notObject).toContain("must be an object");
    for (const m of Object.values(msg)) expect(m).toContain(".mcp.json");
  });

  it("a file that is not JSON or has no mcpServers object is one file-level problem", () => {
    const notJson = parseMcpConfig("{ mcpServers: ", opts());
    expect(notJson.servers).toEqual([]);
    expect(notJson.problems[0]).toMatchObject({ server: null, file: ".mcp.json" });
    expect(notJson.problems[0].message).toContain("not valid JSON");
    expect(parse({ servers: {} }).problems[0].message).toContain('"mcpServers" object');
    expect(parse([]).problems[0].server).toBeNull();
  });

  it("ignores fields it does not use (other clients' settings), but they are part of the digest", () => {
    const a = parse({ mcpServers: { s: { command: "srv", disabled: false } } });
    const b = parse({ mcpServers: { s: { command: "srv", disabled: true } } });
    expect(a.problems).toEqual([]);
    expect(a.servers[0].digest).not.toBe(b.servers[0].digest);
  });
});

describe("digests", () => {
  it("canonical JSON sorts keys at every depth and drops undefined", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: null }, u: undefined })).toBe('{"a":{"c":null,"d":[2,{"x":0,"y":1}]},"b":1}');
  });

  it("the same entry written in another key order has the same digest; any change gives another", () => {
    const d1 = entryDigest({ command: "srv", args: ["a"], env: { X: "1", Y: "2" } });
    const d2 = entryDigest({ env: { Y: "2", X: "1" }, args: ["a"], command: "srv" });
    expect(d1).toBe(d2);
    expect(d1).toMatch(/^[0-9a-f]{64}$/);
    expect(entryDigest({ command: "srv", args: ["b"], env: { X: "1", Y: "2" } })).not.toBe(d1);
    expect(entryDigest({ command: "srv", args: ["a", "b"], env: { X: "1", Y: "2" } })).not.toBe(d1);
  });

  it("is taken before expansion: a secret in the environment never reaches it, and a rotated one keeps the approval", () => {
    const entry = { mcpServers: { s: { url: "http://h/mcp", headers: { Authorization: "Bearer ${TOKEN}" } } } };
    const one = parse(entry, { env: { TOKEN: "one" } }).servers[0];
    const two = parse(entry, { env: { TOKEN: "two" } }).servers[0];
    expect(one.digest).toBe(two.digest);
    expect(one.digest).toBe(entryDigest(entry.mcpServers.s));
  });
});

describe("mergeMcpConfigs", () => {
  it("a server named in both is the --mcp-config one; the others come from both", () => {
    const ws = parse({ mcpServers: { shared: { command: "from-workspace" }, only_ws: { command: "w" } } });
    const flag = parse({ mcpServers: { shared: { command: "from-flag" }, only_flag: { command: "f" } } }, { source: "mcp-config", file: "/etc/mcp.json" });
    const merged = mergeMcpConfigs(ws, flag);
    expect(merged.servers.map((s) => [s.name, s.source])).toEqual([
      ["shared", "mcp-config"],
      ["only_flag", "mcp-config"],
      ["only_ws", "workspace"],
    ]);
    expect(merged.servers.find((s) => s.name === "shared")).toMatchObject({ command: "from-flag" });
  });

  it("a broken workspace entry shadowed by the flag's is no problem; a broken flag entry shadows the workspace's", () => {
    const ws = parse({ mcpServers: { a: { command: "" }, b: { command: "ok" } } });
    const flag = parse({ mcpServers: { a: { command: "fixed" }, b: { command: "" } } }, { source: "mcp-config", file: "f.json" });
    const merged = mergeMcpConfigs(ws, flag);
    expect(merged.servers.map((s) => s.name)).toEqual(["a"]);
    expect(merged.problems.map((p) => [p.server, p.file])).toEqual([["b", "f.json"]]);
  });
});

describe("expandVars and describeEntry", () => {
  it("an empty value falls back only with :-", () => {
    expect(expandVars("${A:-x}", { A: "" })).toBe("x");
    expect(expandVars("${A}", { A: "" })).toBe("");
    expect(expandVars("${A:-}", {})).toBe("");
    expect(expandVars("a${B}c${B}", { B: "-" })).toBe("a-c-");
  });

  it("shows a command line quoted as a shell would need it, or the URL", () => {
    const [s, h] = parse({ mcpServers: { s: { command: "srv", args: ["--name", "two words", "it's"] }, h: { url: "http://h/mcp" } } }).servers;
    expect(describeEntry(s)).toBe(`srv --name 'two words' 'it'\\''s'`);
    expect(describeEntry(h)).toBe("http http://h/mcp");
  });

  it("shows the entry as written: references, never the values, with env, cwd and headers", () => {
    const env = { TOKEN: "s3cret-value", HOME: "/home/u" };
    const [s, h] = parse(
      {
        mcpServers: {
          s: { command: "${HOME}/srv", args: ["--token=${TOKEN}", "--port=${PORT:-8080}"], env: { KEY: "${TOKEN}", MODE: "a b" }, cwd: "tools" },
          h: { url: "http://h/mcp?key=${TOKEN}", headers: { Authorization: "Bearer ${TOKEN}" } },
        },
      },
      { env },
    ).servers;
    expect(describeEntry(s)).toBe("(in tools) KEY=${TOKEN} MODE='a b' ${HOME}/srv --token=${TOKEN} --port=${PORT:-8080}");
    expect(describeEntry(h)).toBe("http http://h/mcp?key=${TOKEN} (header Authorization: Bearer ${TOKEN})");
    expect(s).toMatchObject({ command: "/home/u/srv", args: ["--token=s3cret-value", "--port=8080"], env: { KEY: "s3cret-value" } });
    // A default is the file's own text: only values from the environment are secrets.
    expect(s.expanded).toEqual([
      { ref: "${HOME}", value: "/home/u" },
      { ref: "${TOKEN}", value: "s3cret-value" },
      { ref: "${TOKEN}", value: "s3cret-value" },
    ]);
  });

  it("redact puts each value back as its reference, the longest first, and leaves short values alone", () => {
    const expanded = [
      { ref: "${A}", value: "token" + "x".repeat(10) },
      { ref: "${LONG}", value: "token" + "x".repeat(10) + "-more" },
      { ref: "${ON}", value: "true" },
    ];
    expect(redact(`got token${"x".repeat(10)}-more and token${"x".repeat(10)}, true`, expanded)).toBe("got ${LONG} and ${A}, true");
    expect(REDACT_MIN_CHARS).toBeGreaterThan("true".length);
  });

  it("a URL that is not one once expanded is named as written, so a key in it stays hidden", () => {
    const cfg = parse({ mcpServers: { h: { url: "${BASE}?key=${KEY}" } } }, { env: { BASE: "ftp://h", KEY: "s3cret-value" } });
    expect(cfg.problems[0].message).toContain('"${BASE}?key=${KEY}"');
    expect(cfg.problems[0].message).not.toContain("s3cret-value");
  });
});

describe("loading the files", () => {
  it("no .mcp.json is no server and no problem; a --mcp-config that cannot be read is a file-level problem", async () => {
    const ws = tmpWorkspace();
    try {
      expect(await loadWorkspaceConfig(ws.dir, {})).toEqual({ servers: [], problems: [] });
      const missing = await loadMcpConfig(ws.dir, path.join(ws.dir, "nope.json"), {});
      expect(missing.servers).toEqual([]);
      expect(missing.problems).toEqual([{ server: null, file: path.join(ws.dir, "nope.json"), message: expect.stringContaining("cannot be read") }]);
    } finally {
      ws.cleanup();
    }
  });

  it("reads both, the flag's entries trusted and winning, relative cwd from the root", async () => {
    const ws = tmpWorkspace({
      files: {
        ".mcp.json": JSON.stringify({ mcpServers: { a: { command: "ws-a" }, b: { command: "ws-b", cwd: "sub" } } }),
        "flag.json": JSON.stringify({ mcpServers: { a: { command: "${CMD:-flag-a}" } } }),
      },
    });
    try {
      const cfg = await loadMcpConfig(ws.dir, path.join(ws.dir, "flag.json"), {});
      expect(cfg.problems).toEqual([]);
      expect(cfg.servers.map((s) => [s.name, s.source, s.transport === "stdio" ? s.command : ""])).toEqual([
        ["a", "mcp-config", "flag-a"],
        ["b", "workspace", "ws-b"],
      ]);
      expect(cfg.servers[1]).toMatchObject({ cwd: path.join(ws.dir, "sub"), file: path.join(ws.dir, ".mcp.json") });
    } finally {
      ws.cleanup();
    }
  });
});
