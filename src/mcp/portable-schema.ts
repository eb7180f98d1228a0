/**
 * A passthrough server's input schema as the daemon serves it: JSON Schema regexes are ECMAScript's, but hosts check
 * schemas with their own engines (Python's `re` and `jsonschema` refuse a whole schema over one `\p{L}`). A pattern
 * with syntax only ECMAScript has is left out of what hosts see and of the daemon's own check: the server still
 * checks its arguments against its own schema.
 */

/**
 * ECMAScript-only regex syntax that Python's `re` refuses: property classes (`\p{L}`, `\P{…}`), code point escapes
 * (`\u{…}`), named groups and back-references in ECMAScript's spelling (`(?<name>`, `\k<name>`), control escapes
 * (`\cA`), and the empty negated class `[^]`. Conservative: an escaped backslash before such a letter counts too.
 */
const ECMASCRIPT_ONLY = /\\[pPkc]|\\u\{|\(\?<[^=!]|\[\^\]/;

export function isPortablePattern(pattern: string): boolean {
  return !ECMASCRIPT_ONLY.test(pattern);
}

/** `schema` without the patterns that are not portable (at any depth); the same object when it has none. */
export function portableSchema<T>(schema: T): T {
  if (Array.isArray(schema)) {
    const items = schema.map((v) => portableSchema(v));
    return items.some((v, i) => v !== schema[i]) ? (items as T) : schema;
  }
  if (!schema || typeof schema !== "object") return schema;
  let changed = false;
  let droppedKeys = false;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "pattern" && typeof value === "string" && !isPortablePattern(value)) {
      changed = true;
      continue;
    }
    let kept = portableSchema(value);
    if (key === "patternProperties" && kept && typeof kept === "object" && !Array.isArray(kept)) {
      const entries = Object.entries(kept);
      const portable = entries.filter(([p]) => isPortablePattern(p));
      if (portable.length < entries.length) {
        kept = Object.fromEntries(portable);
        droppedKeys = true;
      }
    }
    changed ||= kept !== value;
    out[key] = kept;
  }
  // A property a dropped key allowed must not be refused as an extra one.
  if (droppedKeys && out.additionalProperties === false) delete out.additionalProperties;
  return changed ? (out as T) : schema;
}
