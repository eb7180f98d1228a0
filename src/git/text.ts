/** A diff in `text` beyond this is cut: enough to review a change, small enough to leave room in a model's context. */
export const MAX_DIFF_CHARS = 40_000;

/**
 * Bytes of a patch read from git at most: only MAX_DIFF_CHARS of it are shown, and reading (then converting) megabytes
 * would hold the event loop for milliseconds that a file_read beside it would feel.
 */
export const PATCH_READ_BYTES = 1024 * 1024;

/** Files listed in structured results; `files_total` has the real count. A 20,000-file commit is a megabyte of JSON. */
export const MAX_FILES_IN_RESULT = 1000;

/** Cuts a long diff at a line boundary with a note saying how to see the rest; `cutShort`: git's output was already capped. */
export function capDiff(diff: string, narrow: string, cutShort = false): { text: string; truncated: boolean } {
  if (diff.length <= MAX_DIFF_CHARS && !cutShort) return { text: diff, truncated: false };
  const cut = diff.lastIndexOf("\n", MAX_DIFF_CHARS);
  const of = cutShort ? `more than ${PATCH_READ_BYTES} bytes` : `${diff.length}`;
  return {
    text: `${diff.slice(0, cut > 0 ? cut : MAX_DIFF_CHARS)}\n… [diff cut at ${MAX_DIFF_CHARS} characters of ${of}; ${narrow}]`,
    truncated: true,
  };
}

export function fileList<T>(files: T[]): { files: T[]; files_total: number } {
  return { files: files.length > MAX_FILES_IN_RESULT ? files.slice(0, MAX_FILES_IN_RESULT) : files, files_total: files.length };
}

export function list(label: string, items: string[], max = 50): string {
  if (!items.length) return "";
  const shown = items.slice(0, max).join(", ");
  return `${label}: ${shown}${items.length > max ? `, … (${items.length - max} more)` : ""}`;
}
