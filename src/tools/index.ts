import { cancelTool } from "./cancel.js";
import { fileDeleteTool } from "./file-delete.js";
import { fileReadTool } from "./file-read.js";
import { fileWriteTool } from "./file-write.js";
import { findFileTool } from "./find-file.js";
import { infoTool } from "./info.js";
import { listTool } from "./list.js";
import { searchTool } from "./search.js";
import type { AnyTool } from "./tool.js";

/** Every tool, in the order `list` shows them. One explicit array: no discovery, no magic. */
export const TOOLS: AnyTool[] = [
  listTool,
  infoTool,
  cancelTool,
  fileReadTool,
  fileWriteTool,
  fileDeleteTool,
  searchTool,
  findFileTool,
];
