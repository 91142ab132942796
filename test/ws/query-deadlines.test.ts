import { deepStrictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { QueryDeadlines } from "../../src/ws/query-deadlines.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("QueryDeadlines", () => {
  it("ends every waiting socket past its deadline, in the order they came, and only those still waiting", async () => {
    const expired: string[] = [];
    const deadlines = new QueryDeadlines<string>(20, (socket) => expired.push(socket));
    deadlines.add("a");
    deadlines.add("b");
    deadlines.add("c");
    deadlines.delete("b");
    await sleep(20);
    deadlines.add("d");
    await sleep(120);
    deadlines.stop();
    deepStrictEqual(expired, ["a", "c", "d"]);
  });

  it("keeps nothing and ends nothing when the deadline is 0 (no limit)", async () => {
    const expired: string[] = [];
    const deadlines = new QueryDeadlines<string>(0, (socket) => expired.push(socket));
    deadlines.add("a");
    await sleep(30);
    deepStrictEqual(expired, []);
  });

  it("ends nothing once stopped", async () => {
    const expired: string[] = [];
    const deadlines = new QueryDeadlines<string>(10, (socket) => expired.push(socket));
    deadlines.add("a");
    deadlines.stop();
    await sleep(40);
    deepStrictEqual(expired, []);
  });
});
