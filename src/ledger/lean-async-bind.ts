import { AsyncResource } from "node:async_hooks";

/**
 * Makes `AsyncResource.prototype.bind` what it was before Node deprecated the `asyncResource`
 * property of the functions it returns (DEP0172): Node 20 defines that property with two
 * `util.deprecate` wrappers on every call, about 10 µs each time. `ClientHttp2Session.request`
 * binds one function per request, so every ledger call paid it, and its garbage: 15 % of a
 * submit-and-wait's gateway CPU (docs/performance.md), and of a storm's admissions and probes.
 *
 * The bound function still runs in the resource's async scope, with the same `this`, arguments,
 * result and `length`; only the deprecated property is gone, which nothing here reads. Installed
 * only where `bind` still defines that property, so a Node that dropped it keeps its own.
 */
export function installLeanAsyncBind(): void {
  const probe = new AsyncResource("lean-async-bind").bind(() => undefined);
  if (Object.getOwnPropertyDescriptor(probe, "asyncResource") === undefined) return;
  type Fn = (this: unknown, ...args: unknown[]) => unknown;
  const nodeBind = AsyncResource.prototype.bind as (this: AsyncResource, fn: Fn, thisArg?: unknown) => Fn;
  const leanBind = function bind(this: AsyncResource, fn: Fn, thisArg?: unknown): Fn {
    // Node's own validation and error for anything that is not a function.
    if (typeof fn !== "function") return nodeBind.call(this, fn, thisArg);
    const resource = this;
    const bound: Fn =
      thisArg === undefined
        ? function (this: unknown, ...args: unknown[]) {
            return resource.runInAsyncScope(fn, this, ...args);
          }
        : (...args: unknown[]) => resource.runInAsyncScope(fn, thisArg, ...args);
    Object.defineProperty(bound, "length", { configurable: true, value: fn.length });
    return bound;
  };
  AsyncResource.prototype.bind = leanBind as typeof AsyncResource.prototype.bind;
}
