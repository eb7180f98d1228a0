import { z } from "zod";

/**
 * What each built-in tool answers on success, for the generated JSON Schema files and the typed client. A result is an
 * open object: the fields named here are the ones a program reads (each tool's page in docs/tools/ says what they mean);
 * one that only some variants carry (a dry run, tag mode, a background job) is optional, and a field added later does not
 * break a caller. Every result has `text`, the rendering for a model (SPEC 2).
 */

const hash = z.string().regex(/^[0-9a-f]{16}$/);
const str = z.string();
const int = z.number().int();
const bool = z.boolean();
const nullableStr = str.nullable();
const list = z.array(z.unknown());
const entries = z.array(z.looseObject({}));

const result = <S extends z.ZodRawShape>(shape: S) => z.looseObject({ text: str, ...shape });
/** What the dispatcher adds to a mutating tool's dry run: the preview's digest, to approve it by (SPEC 2). */
const preview = { dry_run: z.literal(true).optional(), preview_id: hash.optional() };
const mutating = <S extends z.ZodRawShape>(shape: S) => result({ ...preview, ...shape });

const fileList = { files: entries, files_total: int };
const optional = <S extends z.ZodRawShape>(shape: S) =>
  Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, (v as z.ZodType).optional()])) as unknown as { [K in keyof S]: z.ZodOptional<S[K]> };

const fileWrite = mutating({
  path: str,
  hash,
  previous_hash: hash.nullable(),
  total_lines: int,
  eol: z.enum(["lf", "crlf", "mixed", "none"]),
  created: z.literal(true).optional(),
  converted_from: str.optional(),
  diff: str,
  diff_truncated: z.literal(true).optional(),
  shifts: list,
});

const place = z.looseObject({ path: str, line: int, column: int, tag: nullableStr });
const places = result({ path: str, hash, places: z.array(place) });

const commit = z.looseObject({ sha: str, short: str, author: str, email: str, date: str, subject: str });

const stepOutcome = optional({
  head: str,
  commit: str,
  branch: nullableStr,
  backup: z.unknown(),
  hooks: z.unknown(),
  checks: z.unknown(),
  auto_resolved: list,
  operation: nullableStr,
  ...fileList,
});

export const RESULTS = {
  list: result({ tools: z.array(z.object({ tool_id: str, description: str })) }),
  info: result({
    tool_id: str,
    description: str,
    input_schema: z.record(str, z.unknown()),
    mutating: bool,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
    provider: str,
    state: z.record(str, z.unknown()),
  }),
  cancel: result({ cancelled: bool }),
  session_end: result({ session: str, forgotten_files: int }),
  file_read: result({
    path: str,
    hash,
    total_lines: int,
    eol: z.enum(["lf", "crlf", "mixed", "none"]),
    ...optional({ start_line: int, end_line: int, next_offset: int.nullable(), truncated: z.literal(true) }),
    ...optional({ tags: z.array(z.object({ line: int, tag: str })), missing: z.array(int) }),
    ...optional({ since: hash, unchanged: bool, diff: str, diff_truncated: z.literal(true), shifts: list }),
  }),
  file_write: fileWrite,
  file_delete: mutating({ path: str, previous_hash: hash, deleted: bool, symlink: bool }),
  file_move: mutating({ from: str, to: str, kind: z.enum(["file", "symlink", "folder"]), hash: hash.nullable(), files: int, moved: bool }),
  list_dir: result({
    path: str,
    depth: int,
    total_files: int,
    entries: z.array(z.looseObject({ path: str, kind: str, size: int.optional(), lines: int.optional() })),
    ...optional({ truncated: z.literal(true), left_out: int }),
  }),
  search: result({
    matches: z.array(z.looseObject({ path: str, hash: hash.optional(), lines: z.array(z.looseObject({ line: int, tag: str, match: bool })) })),
    total: int,
    truncated: bool,
    warnings: z.array(str).optional(),
  }),
  find_file: result({ paths: z.array(str), total: int, truncated: bool, approximate: z.array(str).optional() }),
  git_status: result({
    head: nullableStr,
    branch: nullableStr,
    upstream: nullableStr,
    ahead: int.nullable(),
    behind: int.nullable(),
    staged: entries,
    unstaged: entries,
    untracked: z.array(str),
    conflicted: entries,
    operation: z.unknown(),
    clean: bool,
  }),
  git_diff: result({ ...fileList, diff: str, truncated: bool }),
  git_log: result({ commits: z.array(commit), more: bool }),
  git_show: result({
    ref: str,
    ...commit.partial().shape,
    commit: str.optional(),
    path: str.optional(),
    content: str.optional(),
    message: str.optional(),
    ...optional(fileList),
    diff: str.optional(),
    truncated: bool,
  }),
  git_branch: result({
    current: nullableStr,
    branches: z.array(z.looseObject({ name: str, remote: bool, current: bool, commit: str, upstream: nullableStr, track: nullableStr, subject: str })),
  }),
  git_add: mutating({ staged: list }),
  git_commit: mutating({ message: str.optional(), amend: bool, ...stepOutcome }),
  git_push: mutating({ remote: str, remote_branch: str, force: bool, refs: list, commits: list, ...stepOutcome }),
  git_pull: mutating(stepOutcome),
  git_fetch: mutating({ remote: str, updates: list, hooks: z.unknown() }),
  git_clone: mutating({ url: str, path: str, default_branch: nullableStr, branches: list, tags: list }),
  git_checkout: mutating({ ref: str.optional(), created: bool.optional(), ...stepOutcome }),
  git_merge: mutating(stepOutcome),
  git_rebase: mutating({ action: str.optional(), ...stepOutcome }),
  git_reset: mutating({ ref: str.optional(), mode: str.optional(), paths: z.array(str).optional(), ...stepOutcome }),
  git_stash: mutating({
    stashes: list.optional(),
    action: str.optional(),
    stash: str.optional(),
    commit: str.optional(),
    files: z.unknown(),
    hooks: z.unknown(),
    backup: z.unknown(),
  }),
  git_conflicts: result({ operation: z.unknown(), files: list, ours_label: str.optional(), theirs_label: str.optional() }),
  git_conflict_resolve: mutating({
    path: str.optional(),
    hash: hash.nullable().optional(),
    previous_hash: hash.optional(),
    block: int.optional(),
    blocks_left: int.optional(),
  }),
  git_conflict_finalize: mutating(stepOutcome),
  git_check: mutating({ ok: bool.optional(), checks: list }),
  git_word_diff: result({ path: str, hash, from: str, to: str, changes: list, ranges: list }),
  git_line_status: result({ path: str, hash, total_lines: int, ranges: list }),
  git_stage_lines: mutating({ files: list.optional(), ranges: list.optional() }),
  git_unstage_lines: mutating({ files: list.optional(), ranges: list.optional() }),
  git_rollback_lines: mutating({ path: str, hash, previous_hash: hash, rolled_back: int, diff: str, ranges: list }),
  git_changelist_mark: result({ path: str, hash, changelist: str, created: bool, marked: int, ranges: list }),
  git_changelist_of: result({ path: str, hash, lines: list, deletions: list }),
  git_changelists: result({ lists: list, active: str }),
  git_changelist_lines: result({ changelist: str, active: bool, files: list }),
  git_changelist_edit: result({ action: str, lists: z.array(str), active: str }),
  gh: mutating({ command: str, exit_code: int.nullable().optional(), stdout: str.optional(), stderr: str.optional() }),
  terminal_run: mutating({
    ...optional({
      command: str,
      cwd: str,
      commands: z.array(str),
      verdict: str,
      sandbox: z.record(str, z.unknown()),
      background: bool,
      timeout_ms: int.nullable(),
      env: z.array(str),
      stdin_chars: int,
    }),
    ...optional({ job: str, pid: int.nullable(), output_file: str, sandboxed: bool }),
    ...optional({
      exit_code: int.nullable(),
      signal: nullableStr,
      timed_out: bool,
      duration_ms: z.number(),
      output: str,
      truncated: bool,
      output_bytes: int,
      output_limit_hit: z.literal(true),
      changed_files: list,
      changed_files_total: int,
      ignored_changes: z.unknown(),
    }),
  }),
  terminal_jobs: result({
    jobs: z.array(z.looseObject({ job: str, command: str, running: bool, exit_code: int.nullable(), signal: nullableStr, output_file: str })),
  }),
  terminal_output: result({ job: str, running: bool, since: int, next: int, size: int, more: bool, data: str }),
  terminal_kill: mutating({ job: str, killed: bool, exit_code: int.nullable(), signal: nullableStr }),
  lsp_diagnostics: result({
    ...optional({ path: str, hash, status: z.enum(["current", "unknown"]), reason: str, diagnostics: list.nullable() }),
    files: list.optional(),
  }),
  lsp_hover: result({ path: str, hash, line: int, hover: str, range: z.unknown().optional() }),
  lsp_definition: places,
  lsp_references: places,
  lsp_implementation: places,
  lsp_symbols: result({
    path: str.optional(),
    hash: hash.optional(),
    query: str.optional(),
    symbols: z.array(z.looseObject({ name: str, kind: str })),
    truncated: bool.optional(),
  }),
  lsp_rename: mutating({ path: str, hash, new_name: str, count: int, files: z.array(z.looseObject({ path: str, previous_hash: hash, hash, diff: str })) }),
  mcp_servers: result({
    servers: z.array(z.looseObject({ name: str, source: str, state: str, tools: z.array(str) })),
    problems: z.array(z.looseObject({ message: str })),
  }),
  mcp_approve: mutating({ servers: z.array(z.looseObject({ server: str, command: str })) }),
  mcp_revoke: mutating({ server: str, withdrawn: bool }),
  web_search: result({ results: z.array(z.looseObject({ url: str })) }),
  web_fetch: result({ url: str, title: nullableStr, published_date: nullableStr, truncated: bool }),
} as const;

export type BuiltinToolId = keyof typeof RESULTS;
