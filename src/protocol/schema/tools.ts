import { cancelTool } from "../../tools/cancel.js";
import { fileDeleteTool } from "../../tools/file-delete.js";
import { fileMoveTool } from "../../tools/file-move.js";
import { fileReadTool } from "../../tools/file-read.js";
import { fileWriteTool } from "../../tools/file-write.js";
import { findFileTool } from "../../tools/find-file.js";
import { infoTool } from "../../tools/info.js";
import { listDirTool } from "../../tools/list-dir.js";
import { listTool } from "../../tools/list.js";
import { searchTool } from "../../tools/search.js";
import { sessionEndTool } from "../../tools/session-end.js";
import { ghTool } from "../../tools/gh.js";
import { gitAddTool } from "../../tools/git-add.js";
import { gitBranchTool } from "../../tools/git-branch.js";
import { gitCheckTool } from "../../tools/git-check.js";
import { gitCheckoutTool } from "../../tools/git-checkout.js";
import { gitCloneTool } from "../../tools/git-clone.js";
import { gitCommitTool } from "../../tools/git-commit.js";
import { gitConflictFinalizeTool } from "../../tools/git-conflict-finalize.js";
import { gitConflictResolveTool } from "../../tools/git-conflict-resolve.js";
import { gitConflictsTool } from "../../tools/git-conflicts.js";
import { gitDiffTool } from "../../tools/git-diff.js";
import { gitFetchTool } from "../../tools/git-fetch.js";
import { gitLogTool } from "../../tools/git-log.js";
import { gitMergeTool } from "../../tools/git-merge.js";
import { gitPullTool } from "../../tools/git-pull.js";
import { gitPushTool } from "../../tools/git-push.js";
import { gitRebaseTool } from "../../tools/git-rebase.js";
import { gitResetTool } from "../../tools/git-reset.js";
import { gitShowTool } from "../../tools/git-show.js";
import { gitStashTool } from "../../tools/git-stash.js";
import { gitStatusTool } from "../../tools/git-status.js";
import { gitChangelistEditTool } from "../../tools/git-changelist-edit.js";
import { gitChangelistLinesTool } from "../../tools/git-changelist-lines.js";
import { gitChangelistMarkTool } from "../../tools/git-changelist-mark.js";
import { gitChangelistOfTool } from "../../tools/git-changelist-of.js";
import { gitChangelistsTool } from "../../tools/git-changelists.js";
import { gitLineStatusTool } from "../../tools/git-line-status.js";
import { gitRollbackLinesTool } from "../../tools/git-rollback-lines.js";
import { gitStageLinesTool } from "../../tools/git-stage-lines.js";
import { gitUnstageLinesTool } from "../../tools/git-unstage-lines.js";
import { gitWordDiffTool } from "../../tools/git-word-diff.js";
import { mcpApproveTool, mcpRevokeTool } from "../../tools/mcp-approve.js";
import { mcpServersTool } from "../../tools/mcp-servers.js";
import { terminalJobsTool } from "../../tools/terminal-jobs.js";
import { terminalKillTool } from "../../tools/terminal-kill.js";
import { terminalOutputTool } from "../../tools/terminal-output.js";
import { terminalRunTool } from "../../tools/terminal-run.js";
import { lspDefinitionTool } from "../../tools/lsp-definition.js";
import { lspDiagnosticsTool } from "../../tools/lsp-diagnostics.js";
import { lspHoverTool } from "../../tools/lsp-hover.js";
import { lspImplementationTool } from "../../tools/lsp-implementation.js";
import { lspReferencesTool } from "../../tools/lsp-references.js";
import { lspRenameTool } from "../../tools/lsp-rename.js";
import { lspSymbolsTool } from "../../tools/lsp-symbols.js";
import { webFetchTool, webSearchTool } from "../../tools/web.js";

/**
 * The built-in tools by id, with their own types: what the typed client's params come from. The registry's array
 * (tools/index.ts) stays the one list of what runs; a test checks that this map holds the same tools.
 */
export const BUILTINS = {
  list: listTool,
  info: infoTool,
  cancel: cancelTool,
  session_end: sessionEndTool,
  file_read: fileReadTool,
  file_write: fileWriteTool,
  file_delete: fileDeleteTool,
  file_move: fileMoveTool,
  list_dir: listDirTool,
  search: searchTool,
  find_file: findFileTool,
  git_status: gitStatusTool,
  git_diff: gitDiffTool,
  git_log: gitLogTool,
  git_show: gitShowTool,
  git_branch: gitBranchTool,
  git_add: gitAddTool,
  git_commit: gitCommitTool,
  git_push: gitPushTool,
  git_pull: gitPullTool,
  git_fetch: gitFetchTool,
  git_clone: gitCloneTool,
  git_checkout: gitCheckoutTool,
  git_merge: gitMergeTool,
  git_rebase: gitRebaseTool,
  git_reset: gitResetTool,
  git_stash: gitStashTool,
  git_conflicts: gitConflictsTool,
  git_conflict_resolve: gitConflictResolveTool,
  git_conflict_finalize: gitConflictFinalizeTool,
  git_check: gitCheckTool,
  git_word_diff: gitWordDiffTool,
  git_line_status: gitLineStatusTool,
  git_stage_lines: gitStageLinesTool,
  git_unstage_lines: gitUnstageLinesTool,
  git_rollback_lines: gitRollbackLinesTool,
  git_changelist_mark: gitChangelistMarkTool,
  git_changelist_of: gitChangelistOfTool,
  git_changelists: gitChangelistsTool,
  git_changelist_lines: gitChangelistLinesTool,
  git_changelist_edit: gitChangelistEditTool,
  gh: ghTool,
  terminal_run: terminalRunTool,
  terminal_jobs: terminalJobsTool,
  terminal_output: terminalOutputTool,
  terminal_kill: terminalKillTool,
  lsp_diagnostics: lspDiagnosticsTool,
  lsp_hover: lspHoverTool,
  lsp_definition: lspDefinitionTool,
  lsp_references: lspReferencesTool,
  lsp_implementation: lspImplementationTool,
  lsp_symbols: lspSymbolsTool,
  lsp_rename: lspRenameTool,
  mcp_servers: mcpServersTool,
  mcp_approve: mcpApproveTool,
  mcp_revoke: mcpRevokeTool,
  web_search: webSearchTool,
  web_fetch: webFetchTool,
} as const;
