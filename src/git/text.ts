/** A diff in `text` beyond this is cut: enough to review a change, small enough to leave room in a model's context. */
export const MAX_DIFF_CHARS = 40_000;

/** Cuts a long diff at a line boundary with a note saying how to see the rest. */
export function capDiff(diff: string, narrow: string): { text: string; truncated: boolean } {
  if (diff.length <= MAX_DIFF_CHARS) return { text: diff, truncated: false };
  const cut = diff.lastIndexOf("\n", MAX_DIFF_CHARS);
  return {
    text: `${diff.slice(0, cut > 0 ? cut : MAX_DIFF_CHARS)}\n… [diff cut at ${MAX_DIFF_CHARS} characters of ${diff.length}; ${narrow}]`,
    truncated: true,
  };
}

export function list(label: string, items: string[], max = 50): string {
  if (!items.length) return "";
  const shown = items.slice(0, max).join(", ");
  return `${label}: ${shown}${items.length > max ? `, … (${items.length - max} more)` : ""}`;
}
