import assert from "node:assert/strict";
import { AsyncLocalStorage, AsyncResource, executionAsyncId } from "node:async_hooks";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
// Loading the connection module installs it, as the gateway does.
import "../../src/ledger/http2-connection.js";

/**
 * AsyncResource.bind without Node 20's deprecated `asyncResource` accessors (two util.deprecate
 * wrappers a call, about 10 µs, paid by every HTTP/2 request the gateway makes): the bound
 * function must still behave as Node's.
 */
describe("AsyncResource.bind, lean", () => {
  it("defines no asyncResource property on what it returns", () => {
    const bound = new AsyncResource("test").bind(() => 1);
    assert.equal(Object.getOwnPropertyDescriptor(bound, "asyncResource"), undefined);
  });

  it("runs the function in the resource's async scope, with its creator's context", async () => {
    const storage = new AsyncLocalStorage<string>();
    const resource = storage.run("creator", () => new AsyncResource("test"));
    const seen = resource.bind(() => ({ store: storage.getStore(), id: executionAsyncId() }));
    const called = await storage.run(
      "caller",
      () => new Promise((resolve) => setImmediate(() => resolve(seen()))),
    );
    assert.deepEqual(called, { store: "creator", id: resource.asyncId() });
  });

  it("keeps the call's this, or the one given, with the arguments, the result and the length", () => {
    function sum(this: { base: number }, a: number, b: number): number {
      return this.base + a + b;
    }
    const resource = new AsyncResource("test");
    const late = resource.bind(sum);
    assert.equal(late.call({ base: 100 }, 1, 2), 103);
    assert.equal(late.length, 2);
    // Node's bind takes a thisArg too, which its types leave out.
    const bindWith = resource.bind as unknown as (fn: typeof sum, thisArg: { base: number }) => typeof sum;
    const fixed = bindWith.call(resource, sum, { base: 10 });
    assert.equal(fixed.call({ base: 100 }, 1, 2), 13);
    assert.equal(fixed.length, 2);
  });

  it("lets the function's error through, and refuses what is not a function as Node does", () => {
    const failing = new AsyncResource("test").bind(() => {
      throw new RangeError("inside");
    });
    assert.throws(failing, RangeError);
    assert.throws(
      () => new AsyncResource("test").bind(42 as unknown as () => void),
      (error: NodeJS.ErrnoException) => error.code === "ERR_INVALID_ARG_TYPE",
    );
  });

  it("leaves HTTP/2 requests made before the session connected working", async () => {
    const server = http2.createServer((req, res) => res.end(`hello ${req.url}`));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      // Still connecting: node:http2 queues the request's bound onConnect until it has.
      const answers = await Promise.all(
        ["/a", "/b"].map(
          (path) =>
            new Promise<string>((resolve, reject) => {
              const stream = session.request({ ":path": path });
              let text = "";
              stream.setEncoding("utf8").on("data", (chunk: string) => {
                text += chunk;
              });
              stream.on("end", () => resolve(text)).on("error", reject);
            }),
        ),
      );
      assert.deepEqual(answers, ["hello /a", "hello /b"]);
    } finally {
      session.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
