import { createHash, randomBytes } from "node:crypto";
import {
  type ClientCapabilities,
  type InputRequiredResult,
  type ServerContext,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
} from "@modelcontextprotocol/server";
import { type AnyTool, hintsOf } from "../../dispatch/tool.js";

/** `--mcp-confirm`: which calls a person confirms first, for hosts that approve every call by themselves. */
export const CONFIRM_MODES = ["destructive", "mutating", "none"] as const;
export type ConfirmMode = (typeof CONFIRM_MODES)[number];

/** The key of the one input request, in `inputRequests` and in the client's `inputResponses`. */
const CONFIRM = "confirm";
const CONFIRM_SCHEMA = { type: "object" as const, properties: { confirm: { type: "boolean" as const, title: "Run it" } }, required: ["confirm"] };
/** How much of a call's arguments the question shows. */
const SHOWN_ARGS = 300;
/** How long a question stays answerable: a person may take a while. */
const ANSWER_WITHIN_S = 600;

/** What a gated call gets instead of running now: the question to ask, or why it does not run. */
export type Withheld = { ask: InputRequiredResult } | { refused: { code: "DECLINED" | "CONFIRMATION_UNAVAILABLE"; message: string } };

/** What the daemon asked about, sealed in the `requestState` it hands out: only its own question counts as asked. */
interface Asked {
  call: string;
}

/**
 * The confirmation gate of MCP mode (docs/mcp-server.md): before a call of the kind `--mcp-confirm` names, the person is
 * asked through the client, with MCP's own multi-round-trip input (`input_required` for 2026-07-28 clients; the SDK turns
 * it into an `elicitation/create` request for 2025-11-25 ones). The answer counts only on the retry that echoes the
 * signed `requestState` of this very question (the client could otherwise claim an answer nobody gave).
 */
export class ConfirmGate {
  private readonly codec = createRequestStateCodec<Asked>({ key: randomBytes(32), ttlSeconds: ANSWER_WITHIN_S, bind: (ctx) => ctx.mcpReq.method });
  /** For ServerOptions.requestState: a forged or expired state is refused before the handler runs. */
  readonly verify = (state: string, ctx: ServerContext) => this.codec.verify(state, ctx);

  constructor(readonly mode: ConfirmMode) {}

  applies(tool: AnyTool): boolean {
    return this.mode === "mutating" ? tool.mutating : this.mode === "destructive" && hintsOf(tool).destructive;
  }

  /**
   * Undefined when the call may run now; otherwise what to answer instead: the question, or a refusal (the person
   * declined, or the client cannot ask anyone). `client` is what this request's client declared.
   */
  async check(tool: AnyTool, args: Record<string, unknown>, ctx: ServerContext, client: ClientCapabilities | undefined): Promise<Withheld | undefined> {
    if (!this.applies(tool)) return undefined;
    const call = createHash("sha256")
      .update(JSON.stringify([tool.id, args]))
      .digest("base64url");
    const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM);
    if (ctx.mcpReq.requestState<Asked>()?.call === call && answer.kind === "elicit") {
      if (answer.action === "accept" && answer.content?.[CONFIRM] === true) return undefined;
      return {
        refused: {
          code: "DECLINED",
          message: `The person did not confirm ${tool.id} (${answer.action === "accept" ? "unchecked" : answer.action}); nothing was done.`,
        },
      };
    }
    if (!asksInForms(client)) {
      return {
        refused: {
          code: "CONFIRMATION_UNAVAILABLE",
          message:
            `${tool.id} needs a person's confirmation (--mcp-confirm ${this.mode}) and this MCP client cannot ask one (it declares no elicitation capability); nothing was done. ` +
            "Use a client that supports elicitation, or start tool-layer with --mcp-confirm none if the client confirms calls itself.",
        },
      };
    }
    const shown = JSON.stringify(args);
    const ask = inputRequired({
      inputRequests: {
        [CONFIRM]: inputRequired.elicit({
          mode: "form",
          message: `tool-layer: run ${tool.id} ${shown.length > SHOWN_ARGS ? `${shown.slice(0, SHOWN_ARGS)}…` : shown}?`,
          requestedSchema: CONFIRM_SCHEMA,
        }),
      },
      requestState: await this.codec.mint({ call }, ctx),
    });
    return { ask };
  }
}

/** Form elicitation: `elicitation: {}` means form mode too (the 2025-06-18 shape). */
function asksInForms(client: ClientCapabilities | undefined): boolean {
  const e = client?.elicitation;
  return e !== undefined && (e.form !== undefined || e.url === undefined);
}
