import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { firstValueFrom, from, of, Subject, throwError, toArray } from "rxjs";
import { mapInOrder } from "../../src/streams/mapInOrder.js";

describe("mapInOrder", () => {
  it("maps synchronously and drops undefined", async () => {
    const out = await firstValueFrom(
      from([1, 2, 3, 4]).pipe(
        mapInOrder((n) => (n % 2 === 0 ? n * 10 : undefined)),
        toArray(),
      ),
    );
    assert.deepEqual(out, [20, 40]);
  });

  it("keeps the order when some elements wait", async () => {
    const input = new Subject<number>();
    const done = firstValueFrom(
      input.pipe(
        mapInOrder((n) => (n === 2 ? new Promise<number>((r) => setTimeout(() => r(n), 20)) : n)),
        toArray(),
      ),
    );
    for (const n of [1, 2, 3, 4]) input.next(n);
    input.complete();
    assert.deepEqual(await done, [1, 2, 3, 4]);
  });

  it("delivers received elements before a source error", async () => {
    const seen: number[] = [];
    const source = new Subject<number>();
    const result = new Promise<unknown>((resolve) =>
      source.pipe(mapInOrder((n) => (n === 1 ? Promise.resolve(n) : n))).subscribe({
        next: (n) => seen.push(n),
        error: resolve,
      }),
    );
    source.next(1);
    source.next(2);
    source.error(new Error("boom"));
    assert.equal(((await result) as Error).message, "boom");
    assert.deepEqual(seen, [1, 2]);
  });

  it("errors when the function throws or rejects", async () => {
    await assert.rejects(
      firstValueFrom(of(1).pipe(mapInOrder(() => Promise.reject(new Error("nope"))))),
      /nope/,
    );
    await assert.rejects(
      firstValueFrom(throwError(() => new Error("upstream")).pipe(mapInOrder((n: number) => n))),
      /upstream/,
    );
  });
});
