/**
 * SLOW (about 1 min): the package as a Gateway installs it. `npm pack` of this checkout (dist as `npm test` just built
 * it: the pack skips prepack's second build), installed with `--omit=dev` into an empty folder from npm's cache, then,
 * in that folder made a git repository, a script that imports `tool-layer/client` starts `npx tool-layer --root .`.
 * docs/client.md's example is type-checked against the installed declarations and run there too.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { git } from "../helpers/tmp.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
/** docs/client.md's example, as a Gateway would copy it. */
const EXAMPLE = /```ts\n([\s\S]*?)```/.exec(readFileSync(path.join(REPO, "docs/client.md"), "utf8"))![1];

/** What a Gateway's own code does with the installed package: its client, its schemas and its bin. */
const GATEWAY = `
import { readFileSync } from "node:fs";
import { ToolLayerClient } from "tool-layer/client";
const schema = JSON.parse(readFileSync(new URL(import.meta.resolve("tool-layer/schemas/request.schema.json")), "utf8"));
const client = new ToolLayerClient({ root: ".", command: ["npx", "--no-install", "tool-layer"] });
const ready = await client.ready();
const list = await client.ok("list");
const exit = await client.close();
console.log(JSON.stringify({ ready, tools: list.tools.length, badLines: client.badLines, schema: schema.title, exit }));
`;

// 1 min on an idle machine, 2.5 min beside the other engineers' suites: most of it npm copying from its cache and tsc.
describe("the installed package (slow: npm pack and install)", { timeout: 300_000 }, () => {
  const work = realpathSync(mkdtempSync(path.join(tmpdir(), "tool-layer-pack-")));
  afterAll(() => rm(work, { recursive: true, force: true }), 120_000); // node_modules with pyright and typescript

  it("installs from its tarball without dev dependencies, and npx tool-layer --root . answers ready to tool-layer/client", () => {
    const npm = (cwd: string, ...args: string[]) => execFileSync("npm", args, { cwd, encoding: "utf8", stdio: "pipe" });
    npm(REPO, "pack", "--ignore-scripts", "--silent", "--pack-destination", work);
    const [tarball] = readdirSync(work).filter((f) => f.endsWith(".tgz"));
    expect(tarball).toMatch(/^tool-layer-.*\.tgz$/);

    const gateway = path.join(work, "gateway");
    git(work, "init", "-q", gateway);
    writeFileSync(path.join(gateway, "package.json"), JSON.stringify({ name: "gateway", private: true, type: "module" }));
    writeFileSync(path.join(gateway, ".gitignore"), "node_modules/\n");
    writeFileSync(path.join(gateway, "gateway.mjs"), GATEWAY);
    npm(gateway, "install", path.join(work, tarball), "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error");
    const packaged = readdirSync(path.join(gateway, "node_modules/tool-layer"));
    expect(packaged.sort()).toEqual(expect.arrayContaining(["dist", "docs", "schemas", "tools.json", "package.json", "README.md"]));
    expect(readdirSync(path.join(gateway, "node_modules/tool-layer/dist"))).toEqual(["src"]);

    const out = JSON.parse(execFileSync(process.execPath, ["gateway.mjs"], { cwd: gateway, encoding: "utf8" }));
    expect(out).toMatchObject({ ready: { root: gateway }, badLines: 0, schema: "A request line (stdin)", exit: { code: 0 } });
    expect(out.tools).toBe(out.ready.tools);

    writeFileSync(path.join(gateway, "a.txt"), "hello\n");
    writeFileSync(path.join(gateway, "example.mts"), EXAMPLE);
    const tsc = path.join(gateway, "node_modules/typescript/bin/tsc"); // a dependency of the package
    const types = path.join(REPO, "node_modules/@types"); // a Gateway in TypeScript has its own @types/node
    execFileSync(
      process.execPath,
      [tsc, "--noEmit", "--strict", "--module", "nodenext", "--target", "es2022", "--typeRoots", types, "--types", "node", "example.mts"],
      { cwd: gateway, encoding: "utf8", stdio: "pipe" },
    );
    writeFileSync(path.join(gateway, "example.mjs"), EXAMPLE);
    expect(execFileSync(process.execPath, ["example.mjs"], { cwd: gateway, encoding: "utf8" })).toContain("tool: 'file_write'");
    expect(readFileSync(path.join(gateway, "a.txt"), "utf8")).toBe("hello, world\n");
  });
});
