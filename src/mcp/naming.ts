/**
 * How a server's tools are named in the registry (SPEC 12): `NAME_TOOL`, lower-cased, every character outside
 * `[a-z0-9_]` as `_`, cut to 64; a tool already named `NAME_…` is not prefixed again; a clash gets `_2`, `_3`, … .
 * Pure: the registry hands in the ids already taken.
 */

/** Tool ids match `^[a-z][a-z0-9_]{0,63}$` (TOOL_ID_PATTERN, SPEC 6): function names for any model API. */
const MAX_ID_LENGTH = 64;
/** Put before an id that would not start with a letter (a server named `1password`), so it is still a valid id. */
const LETTER_PREFIX = "mcp_";

export function sanitizeName(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9_]/g, "_");
}

/** The id a server's tool asks for, before clashes are settled. */
export function baseToolId(server: string, tool: string): string {
  const prefix = `${sanitizeName(server)}_`;
  const name = sanitizeName(tool);
  let id = name.startsWith(prefix) ? name : prefix + name;
  if (!/^[a-z]/.test(id)) id = LETTER_PREFIX + id;
  return id.slice(0, MAX_ID_LENGTH);
}

/** Whether `id` may be one of `server`'s tools once it lists them: every id baseToolId makes has the server's prefix. */
export function mayBeToolOf(server: string, id: string): boolean {
  const prefix = `${sanitizeName(server)}_`;
  return id.startsWith(prefix) || id.startsWith(LETTER_PREFIX + prefix);
}

/** `base`, or `base_2`, `base_3`, … (cut so the suffix fits in 64): the first that is not taken. */
export function uniqueToolId(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const id = base.slice(0, MAX_ID_LENGTH - suffix.length) + suffix;
    if (!taken.has(id)) return id;
  }
}

/**
 * Ids for one server's tools, in the server's order. `taken` holds every id in use elsewhere (built-ins, other
 * servers). `previous` is this server's last assignment: a tool still offered keeps its id, so a `tools/list_changed`
 * that adds a tool never renames the others under a model that already saw them.
 */
export function assignToolIds(
  server: string,
  tools: readonly string[],
  taken: ReadonlySet<string>,
  previous: ReadonlyMap<string, string> = new Map(),
): Map<string, string> {
  const used = new Set(taken);
  const out = new Map<string, string>();
  for (const tool of tools) {
    const kept = previous.get(tool);
    if (kept !== undefined && !used.has(kept) && !out.has(tool)) {
      out.set(tool, kept);
      used.add(kept);
    }
  }
  for (const tool of tools) {
    if (out.has(tool)) continue;
    const id = uniqueToolId(baseToolId(server, tool), used);
    out.set(tool, id);
    used.add(id);
  }
  return out;
}
