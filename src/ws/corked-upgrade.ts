import type { HttpResponse, us_socket_context_t, WebSocket } from "uWebSockets.js";

/** What `res.upgrade` takes besides the user data (the request's Sec-WebSocket-* and the route's context). */
export interface UpgradeHeaders {
  key: string;
  protocol: string;
  extensions: string;
  context: us_socket_context_t;
}

/**
 * An upgrade made after an asynchronous step (the ledger's admission), inside `res.cork` as uWS
 * asks (the 101 in one send() instead of one per piece, and no corking warning on stderr), kept
 * from uWebSockets.js 3.0.6's cork() fault (uNetworking/uWebSockets#1929: fixed upstream, in no
 * npm build) as far as JS can: not deterministically (see the end).
 *
 * The fault: after its callback, cork() takes the socket for still HTTP when its address did not
 * change, and the upgrade's realloc of the socket from the HTTP size to the smaller WebSocket
 * size keeps the address (glibc shrinks in place). It then reads the HTTP response's state from
 * the tail that realloc freed (a chunk of 80 bytes, or 96 when malloc had handed the socket 16
 * bytes more; the state at its bytes 28-31) and, when that says "connection: close" (bit 16) and
 * "response done" (bit 8 clear), shuts the new WebSocket down (1006). glibc puts the tail on this
 * thread's tcache, which leaves those bytes as the response left them (safe), or, when that tcache
 * bin is full, on a fastbin, which leaves them too unless MALLOC_PERTURB_ fills freed memory (16
 * fills it with exactly bit 16). Whatever allocates the tail before cork() reads writes its own
 * bytes there; whatever frees a chunk of its size meanwhile lands on top of it.
 *
 * What keeps it off:
 *  - the window from the realloc to cork()'s read runs nothing of ours that allocates or frees:
 *    `open` only hands the socket over (handOver) and its open work runs once the cork has
 *    returned; the headers go in as bytes, which uWS.js reads in place (as strings it copies
 *    them to malloc'd memory that it frees right after the upgrade, on top of the tail); the
 *    user data goes on the socket after the cork (uWS.js would copy it key by key in the window);
 *  - the last thing inside the cork allocates the tail, wherever it is: `new ArrayBuffer(72)`
 *    callocs its data from the head of the 80-byte fastbin and zeroes it, and then mallocs its
 *    BackingStore (64 bytes) from the head of the 80-byte tcache bin, which holds 0 at bytes
 *    28-31 (a calloc that finds room there moves the next fastbin chunk onto it first);
 *    `new ArrayBuffer(88)` callocs from the head of the 96-byte fastbin. A tail on the 96-byte
 *    tcache bin keeps the response's bytes. Four of each cover chunks of those sizes freed on
 *    top of the tail meanwhile (96 bytes: three; 80 bytes: six), which only V8 can still do
 *    there: a garbage collection or compile that starts inside uWS.js's open wrapper, or its
 *    background sweeper freeing array buffers into this arena's fastbins (which matters only
 *    when freed memory is perturbed). Not covered: the tail taken in the window and kept with
 *    the wrong bits at 28-31 (by V8 on this thread, or by a thread sharing this malloc arena).
 * Nothing frees them before cork() reads: no JS runs in between.
 * test/e2e/ws-admission.test.ts upgrades under MALLOC_PERTURB_=16, and bench/micro/async-upgrade.ts
 * counts the sockets each way of upgrading loses. Perturbed, bare uWS lost 1 of 30,000
 * (bench/results/upgrade-cork-no-room-2026-11-28-a5ac69d.txt) and the gateway about 1 in
 * 10,000. Unperturbed, in the tests' stack (the gateway in one process and on one thread with the
 * sandbox and its clients), 1 of 96 runs of
 * test/e2e/stream-authorization.test.ts lost one (those gateways now upgrade uncorked:
 * test/support/in-process-gateway.ts). An earlier version first made room for the tail
 * in this thread's tcache (a malloc of each size before the upgrade): that kept perturbation off
 * the tail, but put it where the next malloc of its size on this thread takes it, and something in
 * the window there does: 3 of 24 runs lost one. Not a proof, then: the fault is kept rare, not out.
 *
 * A socket shut down in its cork all the same is not silent: `upgrade` answers undefined, and
 * from then on this CorkedUpgrade (one a worker) upgrades uncorked, as the gateway did before:
 * whatever made this process's memory lose one socket (a perturbed allocator, a V8 whose work in
 * the window differs) loses no second. Uncorked, every piece of the 101 is a send() of its own
 * and uWS prints its corking warning for each upgrade.
 */
export class CorkedUpgrade<T extends object> {
  /** Set while `upgrade` runs its cork: an `open` then is this upgrade's. */
  private pending: Pending<T> | undefined;
  /**
   * What the last upgrade allocated over the freed tail: never read, kept so that no optimiser
   * may drop the allocations as unused.
   */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: written for its side effect (above)
  private held: readonly ArrayBufferLike[] = [];
  /** False once a socket was closed inside its cork: upgrades are uncorked from then on. */
  #corking: boolean;

  /** `corking` false: every upgrade uncorked from the start (GatewayOptions.corkedUpgrades). */
  constructor(corking = true) {
    this.#corking = corking;
  }

  /** Whether upgrades are corked (until the first socket closed inside its cork). */
  get corking(): boolean {
    return this.#corking;
  }

  /**
   * Upgrades inside `res.cork` (outside it once a socket was lost in one). Answers the socket
   * opened, with `data` as its user data, whose open work the caller does now, or undefined when
   * uWS closed it inside the cork (its close handler has run; later upgrades are uncorked).
   */
  upgrade(res: HttpResponse, data: T, headers: UpgradeHeaders): WebSocket<T> | undefined {
    const key = Buffer.from(headers.key);
    const protocol = Buffer.from(headers.protocol);
    const extensions = Buffer.from(headers.extensions);
    // `opened` present from the start: handOver, in the window, then changes no shape.
    const pending: Pending<T> = { data, opened: undefined, closed: false };
    this.pending = pending;
    try {
      if (this.#corking)
        res.cork(() => {
          // Without the user data: uWS.js copies it onto the socket key by key through V8's API,
          // in the window (allocating, and slower than one Object.assign); it is given after.
          res.upgrade<object>({}, key, protocol, extensions, headers.context);
          this.held = scrub();
        });
      else res.upgrade<object>({}, key, protocol, extensions, headers.context);
    } finally {
      this.pending = undefined;
    }
    if (pending.closed) this.#corking = false;
    if (pending.closed || pending.opened === undefined) return undefined;
    Object.assign(pending.opened.getUserData(), data);
    return pending.opened;
  }

  /**
   * In the app's `open`: true when the socket is the one `upgrade` is making, which it answers
   * once the cork has returned (do nothing else with it now: it has no user data yet); false for
   * one upgraded otherwise.
   */
  handOver(ws: WebSocket<T>): boolean {
    if (this.pending === undefined) return false;
    this.pending.opened = ws;
    return true;
  }

  /**
   * First in the app's `close`: true for a socket closed inside its upgrade's cork, before its
   * open work (it never became a stream); its user data is then given to it.
   */
  closing(ws: WebSocket<T>): boolean {
    if (this.pending?.opened !== ws) return false;
    // Its user data first: the close handler reads it.
    Object.assign(ws.getUserData(), this.pending.data);
    this.pending.closed = true;
    return true;
  }
}

interface Pending<T> {
  /** The socket's user data, given to it once the cork has returned (or at its close in it). */
  readonly data: T;
  opened: WebSocket<T> | undefined;
  closed: boolean;
}

/**
 * Allocates the freed tail (see CorkedUpgrade), four of each size. Written out rather than looped:
 * a loop's back edge is where V8 may stop to compile, which allocates.
 */
function scrub(): readonly ArrayBuffer[] {
  return [
    new ArrayBuffer(72),
    new ArrayBuffer(88),
    new ArrayBuffer(72),
    new ArrayBuffer(88),
    new ArrayBuffer(72),
    new ArrayBuffer(88),
    new ArrayBuffer(72),
    new ArrayBuffer(88),
  ];
}
