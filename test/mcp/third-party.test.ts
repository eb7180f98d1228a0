import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { ServerConnection } from "../../src/mcp/server-connection.js";
import { tmpWorkspace } from "../helpers/tmp.js";
import { alive, serverEntry, testSpawn } from "./helpers.js";

const FILESYSTEM_SERVER = fileURLToPath(new URL("../../node_modules/.bin/mcp-server-filesystem", import.meta.url));
const spawn = testSpawn();

/** A server nobody here wrote (built on the SDK v1), as a user would install it from npm. */
describe("the MCP filesystem server from npm, through ServerConnection", () => {
  let ws: ReturnType<typeof tmpWorkspace>;
  let conn: ServerConnection;

  beforeAll(async () => {
    ws = tmpWorkspace({ files: { "notes.txt": "first line\nsecond line\n" } });
    conn = new ServerConnection(serverEntry("filesystem", { command: FILESYSTEM_SERVER, args: [ws.dir] }), { spawn });
    await conn.start();
  });
  afterAll(async () => {
    const pid = conn.status().pid;
    await conn.close();
    if (pid) expect(alive(pid)).toBe(false);
    ws.cleanup();
  });

  it("lists its tools, read-only ones annotated", () => {
    const read = conn.tools.find((t) => t.name === "read_text_file");
    const write = conn.tools.find((t) => t.name === "write_file");
    expect(read?.readOnly).toBe(true);
    expect(write?.readOnly).toBe(false);
    expect(read?.inputSchema).toMatchObject({ type: "object", properties: { path: expect.any(Object) } });
  });

  it("answers a read-only call", async () => {
    const r = await conn.callTool("read_text_file", { path: `${ws.dir}/notes.txt` });
    expect(r.text).toBe("first line\nsecond line\n");
    expect(r.content[0]).toMatchObject({ type: "text" });
  });

  it("its own refusal (a path outside its roots) comes back as TOOL_ERROR", async () => {
    await expect(conn.callTool("read_text_file", { path: "/etc/hostname" })).rejects.toMatchObject({ code: "TOOL_ERROR" });
  });
});
