import { MAX_TEXT_CHARS } from "../core/limits.js";

/** A failure as a transport answers it: the code, the message, and whatever details the error carries. */
export interface FailureResult {
  code: string;
  message: string;
  [detail: string]: unknown;
}

/** A detail shown as JSON beyond this is cut: its structured form is in the result beside the text. */
const MAX_JSON_DETAIL_CHARS = 2_000;
/** Details whose words the message already carries (a passthrough server's content is rendered into it). */
const SAID_IN_MESSAGE = new Set(["content", "structuredContent"]);

/**
 * The text of a failure, for a model that reads only text (JSON lines `text`, an MCP tool result's text content):
 * `CODE: message`, then each detail the model may need to act on — a multi-line one (a diff, a stderr tail, a preview's
 * text) as a block under its name, a list or a value on one line, anything else as compact JSON.
 */
export function errorText(failure: FailureResult): string {
  const { code, message, text: _text, ...details } = failure;
  const parts = [`${code}: ${message}`];
  for (const [key, value] of Object.entries(details)) {
    const shown = SAID_IN_MESSAGE.has(key) ? undefined : detailText(key, value, message);
    if (shown !== undefined) parts.push(shown);
  }
  const text = parts.join("\n");
  // Cut like a success's `text`; the whole details stay in the result's fields.
  if (text.length <= MAX_TEXT_CHARS) return text;
  return `${text.slice(0, MAX_TEXT_CHARS)}\n… [cut at ${MAX_TEXT_CHARS} characters; the details are in the result's fields]`;
}

/** Whether `value` stands in `message` as a whole (not as part of a longer word or hash). */
function said(message: string, value: string): boolean {
  for (let at = message.indexOf(value); at >= 0; at = message.indexOf(value, at + 1)) {
    if (!/\w/.test(message[at - 1] ?? "") && !/\w/.test(message[at + value.length] ?? "")) return true;
  }
  return false;
}

function detailText(key: string, value: unknown, message: string): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "string") {
    if (said(message, value.trim())) return undefined;
    return value.includes("\n") ? `${key}:\n${value.trimEnd()}` : `${key}: ${value}`;
  }
  if (typeof value !== "object") return `${key}: ${String(value)}`;
  if (Array.isArray(value)) {
    if (!value.length) return undefined;
    if (value.every((v) => typeof v !== "object" || v === null)) return `${key}: ${value.join(", ")}`;
  } else {
    // A nested result (PREVIEW_STALE's new preview) is read by its own text.
    const nested = (value as { text?: unknown }).text;
    if (typeof nested === "string" && nested) return `${key}:\n${nested.trimEnd()}`;
  }
  const json = JSON.stringify(value);
  return `${key}: ${json.length > MAX_JSON_DETAIL_CHARS ? `${json.slice(0, MAX_JSON_DETAIL_CHARS)}…` : json}`;
}
