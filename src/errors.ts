/** Error codes of SPEC.md section 2; later tools add theirs here so the README can list them all. */
export const ERROR_CODES = [
  "PARSE_ERROR",
  "INVALID_REQUEST",
  "NOT_AVAILABLE",
  "INVALID_PARAMS",
  "CANCELLED",
  "TIMEOUT",
  "INTERNAL",
  "NOT_FOUND",
  "NOT_A_FILE",
  "ALREADY_EXISTS",
  "PATH_OUTSIDE_ROOT",
  "PATH_FORBIDDEN",
  "BINARY_FILE",
  "ENCODING",
  "TOO_LARGE",
  "HASH_MISMATCH",
  "TAG_NOT_FOUND",
  "TAG_AMBIGUOUS",
  "TAG_MISMATCH",
  "OVERLAP",
  "NO_CHANGE",
  // git tools
  "NOT_A_REPOSITORY",
  "GIT_FAILED",
  "CHECK_FAILED",
  "HOOK_FAILED",
  "CONFLICT",
  "REJECTED",
  // passthrough tools
  "TOOL_MISSING",
  "GH_FAILED",
  // language servers (SPEC 10)
  "LSP_UNAVAILABLE",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** A failure a caller can act on: thrown by tools, answered as `{success:false, result:{code, message, ...details}}`. */
export class ToolError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "ToolError";
  }
}

export function isNodeError(e: unknown, code?: string): e is NodeJS.ErrnoException {
  return e instanceof Error && "code" in e && (code === undefined || (e as NodeJS.ErrnoException).code === code);
}
