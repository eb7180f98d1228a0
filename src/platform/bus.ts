/**
 * The daemon's one internal event bus (SPEC 7): every change the daemon learns of flows through it, and each consumer
 * (the stdout writer, the language servers' document sync, the changelist tracker, MCP notifications) subscribes the
 * same way. Events are typed here; a module that adds events declares them by augmenting `BusEvents`:
 *   declare module "../platform/bus.js" { interface BusEvents { "lsp.diagnostics": {...} } }
 * Delivery is synchronous and in order; a subscriber that throws is logged and the others still get the event.
 */

/** Event name -> payload. The names are the wire's event names: the stdout writer forwards them as they are. */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface BusEvents {
  "tools.changed": { added: string[]; removed: string[]; changed: string[] };
  "vfs.state": { live: boolean; reason: string };
}

export type EventName = keyof BusEvents & string;
type Handler<K extends EventName> = (data: BusEvents[K]) => void;
type AnyHandler = (event: EventName, data: unknown) => void;

export class EventBus {
  private readonly handlers = new Map<EventName, Set<Handler<never>>>();
  private readonly any = new Set<AnyHandler>();

  constructor(private readonly log: (message: string) => void = () => undefined) {}

  /** Subscribes to one event; returns the unsubscribe. */
  on<K extends EventName>(event: K, handler: Handler<K>): () => void {
    let set = this.handlers.get(event);
    if (!set) this.handlers.set(event, (set = new Set()));
    set.add(handler as Handler<never>);
    return () => set.delete(handler as Handler<never>);
  }

  /** Subscribes to every event (the transports forward them all). */
  onAny(handler: AnyHandler): () => void {
    this.any.add(handler);
    return () => this.any.delete(handler);
  }

  emit<K extends EventName>(event: K, data: BusEvents[K]): void {
    for (const h of this.handlers.get(event) ?? []) this.deliver(event, () => (h as Handler<K>)(data));
    for (const h of this.any) this.deliver(event, () => h(event, data));
  }

  private deliver(event: string, call: () => void): void {
    try {
      call();
    } catch (e) {
      this.log(`a subscriber of ${event} failed: ${e instanceof Error ? e.stack : String(e)}`);
    }
  }
}
