import { z } from "zod";
import { ERROR_CODES } from "../../errors.js";

/** The request and answer envelopes of SPEC 2, as the JSON-lines transport reads and writes them (transport.ts). */

const callId = z.union([z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER), z.string()]);

export const REQUEST = z.object({
  tool_id: z.string().describe("The tool to call, as `list` names it."),
  session_id: z.string().min(1).describe("Who is calling: views, stale_sessions and attribution are per session."),
  toolcall_id: callId.describe("Echoed as the answer's call_id, with the same type; a number must be a safe integer."),
  approved: z.boolean().optional().describe("Default false: a mutating tool then runs as a dry run and returns a preview."),
  params: z.record(z.string(), z.unknown()).optional().describe("The tool's params (its own schema), default {}."),
});

/** A failure's result: a code, a sentence a model can act on, and the code's details (SPEC 2, docs/errors.md). */
export const ERROR_RESULT = z.looseObject({
  code: z.enum(ERROR_CODES),
  message: z.string(),
});

export const SUCCESS_ANSWER = z.object({ call_id: callId, success: z.literal(true), result: z.record(z.string(), z.unknown()) });
/** call_id is null when the line was not JSON or had no usable toolcall_id. */
export const FAILURE_ANSWER = z.object({ call_id: callId.nullable(), success: z.literal(false), result: ERROR_RESULT });
export const ANSWER = z.discriminatedUnion("success", [SUCCESS_ANSWER, FAILURE_ANSWER]);

export type Request = z.input<typeof REQUEST>;
export type ErrorResult = z.output<typeof ERROR_RESULT>;
