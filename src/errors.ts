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
  "PREVIEW_STALE",
  // operating-system failures a caller can act on (toolErrorOf)
  "NO_SPACE",
  "PERMISSION_DENIED",
  "SYMLINK_LOOP",
  "NAME_TOO_LONG",
  "BUSY",
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
  // MCP servers and web search (SPEC 12)
  "TOOL_ERROR",
  "MCP_SERVER_FAILED",
  "NOT_CONFIGURED",
  "UNREACHABLE",
  // terminal (SPEC 11)
  "SHELL_WRITE_REFUSED",
  "SANDBOX_UNAVAILABLE",
  // language servers (SPEC 10)
  "LSP_UNAVAILABLE",
  // MCP mode's confirmation gate (--mcp-confirm)
  "DECLINED",
  "CONFIRMATION_UNAVAILABLE",
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

/** errno codes that mean something a caller can act on, with the code and the advice they get. */
const OS_ERRORS: Record<string, [ErrorCode, string]> = {
  ENOSPC: ["NO_SPACE", "the disk (or quota) is full; free some space, then retry"],
  EDQUOT: ["NO_SPACE", "the disk quota is exhausted; free some space, then retry"],
  EACCES: ["PERMISSION_DENIED", "the daemon's user may not do this here; change the permissions or use another path"],
  EPERM: ["PERMISSION_DENIED", "the operation is not permitted here; change the permissions or use another path"],
  EROFS: ["PERMISSION_DENIED", "the file system is mounted read-only"],
  ELOOP: ["SYMLINK_LOOP", "the path runs through a loop of symlinks; fix or remove the link"],
  ENAMETOOLONG: ["NAME_TOO_LONG", "the path or one of its names is too long for the file system; use a shorter one"],
  EBUSY: ["BUSY", "the file is busy (in use or a mount point); retry later or use another path"],
  ETXTBSY: ["BUSY", "the file is a program that is running; retry once it has exited"],
};

/**
 * The ToolError a failure stands for: a ToolError itself, or an OS error a caller can act on (no space, permission
 * denied, ...) with a message naming the path. undefined for anything else, which is a fault of ours (INTERNAL).
 */
export function toolErrorOf(e: unknown, describePath: (abs: string) => string = (p) => p): ToolError | undefined {
  if (e instanceof ToolError) return e;
  if (!isNodeError(e) || !e.code || !OS_ERRORS[e.code]) return undefined;
  const [code, advice] = OS_ERRORS[e.code];
  const where = e.path ? `${describePath(e.path)}: ` : "";
  return new ToolError(code, `${where}${advice} (${e.code}).`, { errno: e.code });
}
