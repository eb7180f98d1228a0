/** `npm run tools-json`: regenerates tools.json and docs/tools/reference.md from the tools' zod schemas. */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { manifestText, referenceText } from "../src/manifest.js";

for (const [rel, text] of [["../../tools.json", manifestText()], ["../../docs/tools/reference.md", referenceText()]] as const) {
  const target = fileURLToPath(new URL(rel, import.meta.url));
  writeFileSync(target, text);
  console.log(`wrote ${target}`);
}
