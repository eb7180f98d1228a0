import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/server";

/**
 * The files 2026-07-28 clients listen to (`subscriptions/listen` with `resourceSubscriptions`), read off the wire. The
 * SDK's stdio entry serves the listens itself and keeps them private; it forwards a `resources/updated` only when its
 * URI is, string for string, one a listen named. So the daemon must learn those strings to say which of them a change
 * touched, however the client spelled them.
 */
export class ListenedFiles {
  private readonly byListen = new Map<RequestId, string[]>();

  /** Every inbound message: a listen request adds its URIs, the cancel of a listen takes them away. */
  see(message: JSONRPCMessage): void {
    if (!("method" in message)) return;
    const params = (message.params ?? {}) as Record<string, unknown>;
    if (message.method === "subscriptions/listen" && "id" in message) {
      const uris = (params.notifications as { resourceSubscriptions?: unknown } | undefined)?.resourceSubscriptions;
      if (Array.isArray(uris))
        this.byListen.set(
          message.id,
          uris.filter((u): u is string => typeof u === "string"),
        );
    } else if (message.method === "notifications/cancelled") {
      this.byListen.delete(params.requestId as RequestId);
    }
  }

  /** The URIs some open listen names. */
  uris(): Set<string> {
    return new Set([...this.byListen.values()].flat());
  }
}
