/**
 * End-to-end stream lag: each command the run sends is registered with its intended send time;
 * each subscriber that receives the command's transaction on /v2/updates reads the lag as the
 * time from that send time to now. A command is forgotten once every subscriber had it, or when
 * it failed (no transaction will come).
 */
export class LagTracker {
  private readonly pending = new Map<string, { sentAt: number; remaining: number }>();

  constructor(private readonly subscribers: number) {}

  sent(commandId: string, sentAt: number): void {
    if (this.subscribers > 0) this.pending.set(commandId, { sentAt, remaining: this.subscribers });
  }

  failed(commandId: string): void {
    this.pending.delete(commandId);
  }

  /** Commands some subscriber has yet to receive. */
  outstanding(): number {
    return this.pending.size;
  }

  /** The lag of this subscriber's delivery of the command, when the run sent it (and measures it). */
  received(commandId: string, at: number): number | undefined {
    const entry = this.pending.get(commandId);
    if (entry === undefined) return undefined;
    if (--entry.remaining === 0) this.pending.delete(commandId);
    return at - entry.sentAt;
  }
}
