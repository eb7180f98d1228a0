/** `npm run tools-json`: regenerates tools.json at the repository root from the tools' zod schemas. */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { manifestText } from "../src/manifest.js";

const target = fileURLToPath(new URL("../../tools.json", import.meta.url));
writeFileSync(target, manifestText());
console.log(`wrote ${target}`);
