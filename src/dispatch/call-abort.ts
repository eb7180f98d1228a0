/**
 * A call's cancellation (cancel, timeout, shutdown) whose AbortSignal is made only when something asks for it. Node's
 * AbortSignal costs several µs to make and as much again for each listener added and removed; the dispatcher used two
 * per call and a listener on each, a tenth of the CPU a small file_read takes. Most calls never ask for the signal
 * (a read checks `aborted`), so the dispatcher's own waits use the plain listener list here.
 */
export class CallAbort {
  aborted = false;
  reason: unknown;
  private controller?: AbortController;
  private listeners: (() => void)[] = [];

  /** The signal tools hand to processes, fetches and servers; aborted at once when the call already is. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** The signal, if one was made: nothing else can have been given it. */
  get madeSignal(): AbortSignal | undefined {
    return this.controller?.signal;
  }

  /** Aborts once: the signal's listeners run first (the tool's own, added while it ran), then onAbort's, in order. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = [];
    for (const l of listeners) l();
  }

  /** Runs `fn` once when the call is aborted; returns what takes it back. */
  onAbort(fn: () => void): () => void {
    this.listeners.push(fn);
    return () => {
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Throws the reason once aborted, as AbortSignal.throwIfAborted does. */
  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }
}
