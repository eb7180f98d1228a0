/** Why a server stopped, from its stderr (pure; apart from server-connection.ts, which loads the SDK: mcp_servers needs it before). */

/** A stack frame (`    at f (file:1:2)`) or Node's `Node.js v20.19.0` footer: what ends a crash's stderr, not its cause. */
const NOT_A_CAUSE = /^\s+at\s|^Node\.js v\d/;

/**
 * The line of a server's stderr that says why it stopped: the last non-empty one that is not a stack frame or Node's
 * footer (an uncaught error ends with both, after `Error: …`); else the last non-empty one; null for an empty stderr.
 */
export function stderrCause(tail: string): string | null {
  const lines = tail.split("\n").filter((l) => l.trim() !== "");
  const cause = [...lines].reverse().find((l) => !NOT_A_CAUSE.test(l)) ?? lines.at(-1);
  return cause === undefined ? null : cause.trim();
}
