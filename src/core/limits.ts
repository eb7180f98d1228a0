/**
 * The limits more than one layer reads: a transport, the dispatcher and the tools agree on them through this module
 * alone (core: it imports nothing).
 */

/** `text` beyond this is cut with a note: a model's context is the scarce resource, not our bandwidth. */
export const MAX_TEXT_CHARS = 100_000;

/** file_read returns at most this many lines per call (and tags at most this many); MCP's resource reads page by it. */
export const FILE_READ_MAX_LINES = 2000;

/** Files above this are TOO_LARGE for the file tools unless `--max-file-bytes` raises it (SPEC 4). */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
