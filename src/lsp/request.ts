/**
 * One request to a language server, as every client call makes it: the server's capability checked first, cancelled
 * with the call, and a server that dies meanwhile told apart from one that refuses (the caller may ask a restarted one).
 */
import { CancellationTokenSource, ConnectionError } from "vscode-languageserver-protocol";
import { ToolError } from "../errors.js";
import type { ServerSession } from "./session.js";

/** A cross-file answer waits this long at most for the server to list the workspace (pyright: 250 ms after the last open). */
export const INDEX_WAIT_MS = 10_000;

/** The server capability each request needs (from its initialize answer). */
const PROVIDERS: Record<string, keyof ServerSession["capabilities"]> = {
  "textDocument/hover": "hoverProvider",
  "textDocument/definition": "definitionProvider",
  "textDocument/implementation": "implementationProvider",
  "textDocument/references": "referencesProvider",
  "textDocument/documentSymbol": "documentSymbolProvider",
  "workspace/symbol": "workspaceSymbolProvider",
  "textDocument/rename": "renameProvider",
};

/**
 * A server that died while answering (a crash, an OOM kill) is asked once more, restarted within the cap: the question
 * was fine, and SPEC 10 has a call wait for the restart rather than fail for it.
 */
export async function retrying<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (!(e instanceof ToolError && e.code === "LSP_UNAVAILABLE" && e.details.server_exited)) throw e;
    return work();
  }
}

/** Until the server has listed the workspace (bounded: a server that never says so answers from what it has). */
export async function untilIndexed(session: ServerSession, signal?: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const aborted = new Promise<void>((resolve) => signal?.addEventListener("abort", (onAbort = () => resolve()), { once: true }));
  try {
    await Promise.race([session.indexed, aborted, new Promise<void>((resolve) => (timer = setTimeout(resolve, INDEX_WAIT_MS)))]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
  signal?.throwIfAborted();
}

/** LSP_UNAVAILABLE for a request the server does not offer (pyright has no implementations), before asking. */
function offers(session: ServerSession, method: string): void {
  const key = PROVIDERS[method];
  if (key && !session.capabilities[key]) {
    throw new ToolError(
      "LSP_UNAVAILABLE",
      `${session.spec.name} does not answer ${method}${method.endsWith("implementation") ? "; lsp_references finds the uses instead" : ""}.`,
      {
        language: session.spec.language,
      },
    );
  }
}

/** One request; a server error is `errorCode` (NOT_FOUND for a rename the server refuses), a dead server LSP_UNAVAILABLE. */
export async function request<R>(
  session: ServerSession,
  method: string,
  params: object,
  signal?: AbortSignal,
  errorCode: "LSP_UNAVAILABLE" | "NOT_FOUND" = "LSP_UNAVAILABLE",
): Promise<R> {
  offers(session, method);
  signal?.throwIfAborted();
  const cancel = new CancellationTokenSource();
  const onAbort = () => cancel.cancel();
  signal?.addEventListener("abort", onAbort, { once: true });
  let stopWatching = () => {};
  const death = new Promise<never>((_, reject) => (stopWatching = session.whenDead(() => reject(new Error("the server died")))));
  try {
    return (await Promise.race([session.connection.sendRequest(method, params, cancel.token), death])) as R;
  } catch (e) {
    signal?.throwIfAborted();
    // Asked between the server's stdout closing and its exit being seen: the exit is on its way, and decides.
    if (!session.dead && e instanceof ConnectionError) await session.exited;
    if (session.dead) {
      throw new ToolError("LSP_UNAVAILABLE", `${session.spec.name} exited while answering; the next call restarts it.`, {
        language: session.spec.language,
        server_exited: true,
      });
    }
    throw new ToolError(errorCode, `${session.spec.name} could not answer ${method}: ${(e as Error).message}`, { language: session.spec.language });
  } finally {
    stopWatching();
    death.catch(() => {});
    signal?.removeEventListener("abort", onAbort);
    cancel.dispose();
  }
}
