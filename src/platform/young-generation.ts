import v8 from "node:v8";

/** V8's own growth factor (flag-definitions.h), put back once the daemon has started. */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;

/** Whether the person running node chose the factor themselves (node's flags or NODE_OPTIONS): theirs is kept. */
function chosenByNodeFlags(): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((a) => /semi[-_]space/.test(a));
}

/**
 * Holds V8's young generation at its first size (2 x 1 MB) until releaseYoungGeneration(). While many objects survive
 * its scavenges, as they do while the daemon loads its modules and builds its file index, V8 doubles the young
 * generation up to 2 x 16 MB and keeps it so: 25 MB of the RSS at ready, on 100,000 files and on an empty repository
 * alike, for objects that live on in the old generation anyway. main.ts holds it from the first line, Daemon.start
 * releases it once started: after that it grows again as V8 decides, for the calls that need it.
 */
export function holdYoungGeneration(): void {
  if (!chosenByNodeFlags()) v8.setFlagsFromString("--semi-space-growth-factor=1");
}

export function releaseYoungGeneration(): void {
  if (!chosenByNodeFlags()) v8.setFlagsFromString(`--semi-space-growth-factor=${V8_SEMI_SPACE_GROWTH_FACTOR}`);
}
