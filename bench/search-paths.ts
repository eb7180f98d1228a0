/** Generated workspace paths that look like a large monorepo, for the find_file benchmark and the search tree. */

const WORDS = (
  "user account auth session token login logout profile settings config service controller model view router route " +
  "handler middleware store state reducer action effect hook component button modal dialog form input select table " +
  "list item card header footer sidebar layout page app main index util utils helper helpers format parse validate " +
  "schema type types interface api client server request response error errors logger log cache queue worker job " +
  "task scheduler event events emitter stream buffer file files path paths image upload download search filter sort " +
  "payment invoice order cart product catalog price discount shipping address email notification message chat " +
  "channel socket http graphql query mutation resolver database migration seed repository entity dto mapper " +
  "test spec mock fixture factory builder adapter provider context theme style color icon font animation chart graph"
).split(" ");
const TOP = ["packages", "apps", "libs", "services", "tools", "src", "docs", "scripts", "test", "vendor"];
const EXTS = [".ts", ".ts", ".ts", ".tsx", ".js", ".json", ".md", ".css", ".go", ".py", ".rs", ".test.ts", ".spec.ts"];

/** A small deterministic PRNG (mulberry32), so every run measures the same tree. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const cap = (w: string) => w[0].toUpperCase() + w.slice(1);

function fileName(r: () => number): string {
  const n = 1 + Math.floor(r() * 3);
  const words = Array.from({ length: n }, () => pick(r, WORDS));
  const style = r();
  const stem =
    style < 0.4 ? words.map(cap).join("") : style < 0.7 ? words.join("-") : style < 0.85 ? words.join("_") : words[0] + words.slice(1).map(cap).join("");
  return stem + pick(r, EXTS);
}

/** `n` distinct root-relative paths, 2 to 8 levels deep. */
export function generatePaths(n: number, seed = 42): string[] {
  const r = rng(seed);
  const out = new Set<string>();
  const folders: string[] = [];
  for (let i = 0; i < Math.max(50, n / 12); i++) {
    const depth = 1 + Math.floor(r() * 6);
    const parts = [pick(r, TOP)];
    for (let d = 1; d < depth; d++) parts.push(pick(r, WORDS));
    folders.push(parts.join("/"));
  }
  while (out.size < n) out.add(`${pick(r, folders)}/${fileName(r)}`);
  return [...out];
}

/**
 * `files` distinct paths in about `folders` folders (ancestors counted: a folder is any directory that exists), 1 to 6
 * levels deep, a few dozen files in each, as a large monorepo has. Deterministic for a seed.
 */
export function generateTree(files: number, folders: number, seed = 42): string[] {
  const r = rng(seed);
  const dirs = new Set<string>();
  while (dirs.size < folders) {
    const parts = [pick(r, TOP)];
    for (let d = 1, depth = 1 + Math.floor(r() * 6); d < depth; d++) parts.push(pick(r, WORDS));
    for (let k = 1; k <= parts.length; k++) dirs.add(parts.slice(0, k).join("/"));
  }
  const list = [...dirs];
  const out = new Set<string>();
  while (out.size < files) out.add(`${pick(r, list)}/${fileName(r)}`);
  return [...out];
}

/** Queries an agent types: names, abbreviations, fragments with a slash, extensions, typos of order. */
export const FIND_QUERIES = [
  "UserService",
  "usrsvc",
  "config",
  "index.ts",
  "auth/login",
  "paymentController",
  "pmtctrl",
  "README",
  "utils",
  "button.tsx",
  "schema",
  "api/client",
  "order-item",
  "graphqlresolver",
  "test/fixtures",
  "session_token",
  "main",
  "invoice",
  "notifmsg",
  "db/migration",
  "cart",
  "src/app",
  "theme color",
  "logger.ts",
  "qworker",
];

/**
 * Typos an agent makes in names the generated tree has (a swap, a missing, extra or wrong letter, mixed separators):
 * the exact tiers find little for them, so the typo fallback runs.
 */
export const TYPO_QUERIES = [
  "UserSrevice",
  "paymnetController",
  "cofnig_utils",
  "notifcation",
  "invocie_list",
  "graphqlreslover",
  "sessoin_token",
  "shcema",
  "middlewrae",
  "scheudler",
];
