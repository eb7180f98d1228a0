/**
 * `npm run tools-json`: regenerates what is generated from the tools' zod schemas: tools.json, docs/tools/reference.md
 * and the protocol's JSON Schema files in schemas/ (stale ones removed). A test fails when any of them is stale.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { manifestText, referenceText } from "../src/manifest.js";
import { protocolSchemas, schemaText } from "../src/protocol/schema/index.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const write = (rel: string, text: string) => {
  const target = path.join(repo, rel);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, text);
};

write("tools.json", manifestText());
write("docs/tools/reference.md", referenceText());
rmSync(path.join(repo, "schemas"), { recursive: true, force: true });
const schemas = protocolSchemas();
for (const [rel, schema] of schemas) write(path.join("schemas", rel), schemaText(schema));
console.log(`wrote tools.json, docs/tools/reference.md and ${schemas.size} files in schemas/`);
