import { cancelTool } from "./cancel.js";
import { fileDeleteTool } from "./file-delete.js";
import { fileMoveTool } from "./file-move.js";
import { fileReadTool } from "./file-read.js";
import { fileWriteTool } from "./file-write.js";
import { findFileTool } from "./find-file.js";
import { infoTool } from "./info.js";
import { listDirTool } from "./list-dir.js";
import { listTool } from "./list.js";
import { searchTool } from "./search.js";
import { sessionEndTool } from "./session-end.js";
import { ghTool } from "./gh.js";
import { gitAddTool } from "./git-add.js";
import { gitBranchTool } from "./git-branch.js";
import { gitCheckTool } from "./git-check.js";
import { gitCheckoutTool } from "./git-checkout.js";
import { gitCloneTool } from "./git-clone.js";
import { gitCommitTool } from "./git-commit.js";
import { gitConflictFinalizeTool } from "./git-conflict-finalize.js";
import { gitConflictResolveTool } from "./git-conflict-resolve.js";
import { gitConflictsTool } from "./git-conflicts.js";
import { gitDiffTool } from "./git-diff.js";
import { gitFetchTool } from "./git-fetch.js";
import { gitLogTool } from "./git-log.js";
import { gitMergeTool } from "./git-merge.js";
import { gitPullTool } from "./git-pull.js";
import { gitPushTool } from "./git-push.js";
import { gitRebaseTool } from "./git-rebase.js";
import { gitResetTool } from "./git-reset.js";
import { gitShowTool } from "./git-show.js";
import { gitStashTool } from "./git-stash.js";
import { gitStatusTool } from "./git-status.js";
import { gitChangelistEditTool } from "./git-changelist-edit.js";
import { gitChangelistLinesTool } from "./git-changelist-lines.js";
import { gitChangelistMarkTool } from "./git-changelist-mark.js";
import { gitChangelistOfTool } from "./git-changelist-of.js";
import { gitChangelistsTool } from "./git-changelists.js";
import { gitLineStatusTool } from "./git-line-status.js";
import { gitRollbackLinesTool } from "./git-rollback-lines.js";
import { gitStageLinesTool } from "./git-stage-lines.js";
import { gitUnstageLinesTool } from "./git-unstage-lines.js";
import { gitWordDiffTool } from "./git-word-diff.js";
import { mcpApproveTool, mcpRevokeTool } from "./mcp-approve.js";
import { mcpServersTool } from "./mcp-servers.js";
import { terminalJobsTool } from "./terminal-jobs.js";
import { terminalKillTool } from "./terminal-kill.js";
import { terminalOutputTool } from "./terminal-output.js";
import { terminalRunTool } from "./terminal-run.js";
import { lspDefinitionTool } from "./lsp-definition.js";
import { lspDiagnosticsTool } from "./lsp-diagnostics.js";
import { lspHoverTool } from "./lsp-hover.js";
import { lspImplementationTool } from "./lsp-implementation.js";
import { lspReferencesTool } from "./lsp-references.js";
import { lspRenameTool } from "./lsp-rename.js";
import { lspSymbolsTool } from "./lsp-symbols.js";
import type { AnyTool } from "../dispatch/tool.js";
import { webFetchTool, webSearchTool } from "./web.js";

/** Every tool, in the order `list` shows them. One explicit array: no discovery, no magic. */
export const TOOLS: AnyTool[] = [
  listTool,
  infoTool,
  cancelTool,
  sessionEndTool,
  fileReadTool,
  fileWriteTool,
  fileDeleteTool,
  fileMoveTool,
  listDirTool,
  searchTool,
  findFileTool,
  gitStatusTool,
  gitDiffTool,
  gitLogTool,
  gitShowTool,
  gitBranchTool,
  gitAddTool,
  gitCommitTool,
  gitPushTool,
  gitPullTool,
  gitFetchTool,
  gitCloneTool,
  gitCheckoutTool,
  gitMergeTool,
  gitRebaseTool,
  gitResetTool,
  gitStashTool,
  gitConflictsTool,
  gitConflictResolveTool,
  gitConflictFinalizeTool,
  gitCheckTool,
  gitWordDiffTool,
  gitLineStatusTool,
  gitStageLinesTool,
  gitUnstageLinesTool,
  gitRollbackLinesTool,
  gitChangelistMarkTool,
  gitChangelistOfTool,
  gitChangelistsTool,
  gitChangelistLinesTool,
  gitChangelistEditTool,
  ghTool,
  terminalRunTool,
  terminalJobsTool,
  terminalOutputTool,
  terminalKillTool,
  lspDiagnosticsTool,
  lspHoverTool,
  lspDefinitionTool,
  lspReferencesTool,
  lspImplementationTool,
  lspSymbolsTool,
  lspRenameTool,
  mcpServersTool,
  mcpApproveTool,
  mcpRevokeTool,
  webSearchTool,
  webFetchTool,
];
