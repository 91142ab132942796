import type { MethodDefinition } from "@grpc/grpc-js";
import { frameMessage } from "../../src/ledger/grpc-frame.js";
import { LedgerChannel } from "../../src/ledger/ledger-channel.js";
import { FLOW_CONTROL_WINDOW_BYTES } from "../../src/ledger/ledger-client.js";
import { ServerStreamCall } from "../../src/ledger/server-stream-call.js";

const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export interface LeanCalls {
  /**
   * Sends a server-streaming call of `method` on the gateway's own channel, as LedgerClient sends
   * the Ledger API's (which is all it knows); `observeCall` (src/ledger/server-stream.ts) makes it
   * the Observable the gateway's streams are.
   */
  open<Req, Res>(method: MethodDefinition<Req, Res>, request: Req, token?: string): ServerStreamCall<Res>;
  close(): void;
}

/**
 * The lean HTTP/2 channel of src/ledger to a test server of another service than the Ledger API
 * (the Counter of test/fixtures/counter-server.ts), with the gateway's flow-control window: the
 * tests of the stream pipeline run on the code the gateway runs, not on a grpc-js client.
 */
export function leanCalls(target: string): LeanCalls {
  const channel = new LedgerChannel({
    target,
    keepalive: { timeMs: 15_000, timeoutMs: 10_000 },
    windowBytes: FLOW_CONTROL_WINDOW_BYTES,
    reconnectBackoff: { initialMs: 250, maxMs: 1_000 },
    maxMetadataBytes: 8 * 1024,
  });
  return {
    open: (method, request, token) => {
      const call = new ServerStreamCall(method.responseDeserialize, () => {}, MAX_MESSAGE_BYTES);
      const frame = frameMessage(method.requestSerialize(request), MAX_MESSAGE_BYTES);
      if (!Buffer.isBuffer(frame)) throw frame;
      channel.stream(
        {
          path: method.path,
          frame,
          authorization: token === undefined ? undefined : `Bearer ${token}`,
          maxReceiveBytes: MAX_MESSAGE_BYTES,
        },
        call,
      );
      return call;
    },
    close: () => channel.close(),
  };
}
