import type { ContentBlock } from "@modelcontextprotocol/client";
import { plural } from "../core/text.js";

/** What a passthrough call answers (SPEC 12): `text` for the model, the server's own content for programs. */
export interface PassthroughResult {
  text: string;
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
}

/**
 * Text content joined by newlines; other content summarized in one bracketed line each, so a model sees that an image
 * or a file was there without megabytes of base64. The text of an embedded text resource is text, and is kept under a
 * line naming it. With no content at all, structured content is shown as JSON.
 */
export function renderContent(content: readonly ContentBlock[], structured?: Record<string, unknown>): string {
  const parts = content.map(renderBlock);
  if (parts.length === 0 && structured !== undefined) return JSON.stringify(structured);
  return parts.join("\n");
}

function renderBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType} ${plural(base64Bytes(block.data), "byte")}]`;
    case "resource_link":
      return `[resource link ${block.uri}${block.mimeType ? ` ${block.mimeType}` : ""}${block.name && !block.uri.endsWith(block.name) ? ` "${block.name}"` : ""}]`;
    case "resource": {
      const r = block.resource;
      if ("text" in r && typeof r.text === "string") return `[resource ${r.uri}${r.mimeType ? ` ${r.mimeType}` : ""}]\n${r.text}`;
      const blob = "blob" in r && typeof r.blob === "string" ? r.blob : "";
      return `[resource ${r.uri}${r.mimeType ? ` ${r.mimeType}` : ""} ${plural(base64Bytes(blob), "byte")}]`;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

/** Decoded size of base64 text, without decoding it. */
export function base64Bytes(b64: string): number {
  const s = b64.replace(/\s+/g, "");
  const padding = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((s.length * 3) / 4) - padding);
}
