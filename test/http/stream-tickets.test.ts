import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StreamTickets } from "../../src/http/stream-tickets.js";
import { signToken } from "../jwt/test-tokens.js";

/** Not opened: refused, or forgotten already (the route refuses both). */
const NOT_OPENED = /^(refused|unknown)$/;

const asked = { path: "/v2/updates", request: { beginExclusive: 0 }, origin: "https://wallet.example" };

/** The ticket store's rules in virtual time: lifetimes, the per-user cap, what a reconnect needs. */
describe("StreamTickets", () => {
  const clock = { now: 1_000_000_000_000 };
  const tickets = () => new StreamTickets({ ticketTtlMs: 30_000, pendingPerUser: 2, now: () => clock.now });
  const token = (user: string, expInSeconds = 300) =>
    signToken(user, { exp: Math.floor(clock.now / 1000) + expInSeconds });

  it("lets a ticket wait for its first use for the TTL, and never past its token's expiry", () => {
    const store = tickets();
    const long = store.issue(asked, token("alice"));
    const short = store.issue(asked, token("bob", 10));
    assert.equal(long?.expiresAt, clock.now + 30_000);
    assert.equal(short?.expiresAt, Math.floor(clock.now / 1000) * 1000 + 10_000);
    clock.now += 20_000;
    assert.match(
      store.open(short?.ticket ?? "", { path: asked.path, origin: asked.origin, lastEventId: "" }).kind,
      NOT_OPENED,
    );
    assert.equal(
      store.open(long?.ticket ?? "", { path: asked.path, origin: asked.origin, lastEventId: "" }).kind,
      "open",
    );
    clock.now += 20_000;
    const late = store.issue(asked, token("carol"));
    clock.now += 30_001;
    assert.match(
      store.open(late?.ticket ?? "", { path: asked.path, origin: asked.origin, lastEventId: "" }).kind,
      NOT_OPENED,
    );
  });

  it("holds a user to its unused tickets, and counts one used or expired no more", () => {
    const store = tickets();
    const first = store.issue(asked, token("dave"));
    assert.ok(store.issue(asked, token("dave")));
    assert.equal(store.issue(asked, token("dave")), undefined);
    assert.ok(store.issue(asked, token("erin")), "another user has its own count");
    store.open(first?.ticket ?? "", { path: asked.path, origin: asked.origin, lastEventId: "" });
    assert.ok(store.issue(asked, token("dave")));
    clock.now += 31_000;
    assert.ok(store.issue(asked, token("dave")), "expired tickets are forgotten");
  });

  it("lets a reconnect in with the stream's resume key, after its reader stopped, for the TTL", () => {
    const store = tickets();
    const { ticket } = store.issue(asked, token("frank")) ?? { ticket: "" };
    const opening = store.open(ticket, { path: asked.path, origin: asked.origin, lastEventId: "" });
    assert.equal(opening.kind, "open");
    const stream = opening.kind === "open" ? opening.stream : undefined;
    let stopped = 0;
    const detach = store.attach(stream as NonNullable<typeof stream>, {
      stop: () => stopped++,
      renew: async () => undefined,
    });
    const key = stream?.resumeKey ?? "";
    assert.equal(
      store.open(ticket, { path: asked.path, origin: asked.origin, lastEventId: "" }).kind,
      "refused",
    );
    assert.equal(
      store.open(ticket, {
        path: asked.path,
        origin: asked.origin,
        lastEventId: `${"x".repeat(key.length)}.5`,
      }).kind,
      "refused",
    );
    // A reconnect while the gateway still thinks a connection reads it: it takes the stream over.
    const again = store.open(ticket, { path: asked.path, origin: asked.origin, lastEventId: `${key}.5` });
    assert.deepEqual(again.kind === "open" ? again.after : undefined, "5");
    assert.equal(stopped, 1);
    // The stopped connection's end says nothing of the stream the reconnect reads now.
    detach(false);
    const reconnected = store.attach(stream as NonNullable<typeof stream>, {
      stop: () => stopped++,
      renew: async () => undefined,
    });
    clock.now += 60_000;
    assert.equal(store.opened(ticket), stream, "read, it lives as long as its token");
    reconnected(false);
    clock.now += 31_000;
    assert.match(
      store.open(ticket, { path: asked.path, origin: asked.origin, lastEventId: `${key}.7` }).kind,
      NOT_OPENED,
    );
  });

  it("answers an ended stream's reconnect with its end, and spends a ticket shown elsewhere", () => {
    const store = tickets();
    const { ticket } = store.issue(asked, token("grace")) ?? { ticket: "" };
    const opening = store.open(ticket, { path: asked.path, origin: asked.origin, lastEventId: "" });
    const stream = opening.kind === "open" ? opening.stream : undefined;
    const detach = store.attach(stream as NonNullable<typeof stream>, {
      stop: () => undefined,
      renew: async () => undefined,
    });
    detach(true);
    assert.equal(
      store.open(ticket, { path: asked.path, origin: asked.origin, lastEventId: `${stream?.resumeKey}.9` })
        .kind,
      "ended",
    );
    const other = store.issue(asked, token("heidi"))?.ticket ?? "";
    assert.equal(
      store.open(other, { path: asked.path, origin: "https://evil.example", lastEventId: "" }).kind,
      "refused",
    );
    assert.equal(
      store.open(other, { path: asked.path, origin: asked.origin, lastEventId: "" }).kind,
      "unknown",
    );
  });

  it("leaves a used ticket's stream untouched by a GET that shows it wrongly: no key, another origin or path (a URL seen in a log)", () => {
    const store = tickets();
    const { ticket } = store.issue(asked, token("ivan")) ?? { ticket: "" };
    const opening = store.open(ticket, { path: asked.path, origin: asked.origin, lastEventId: "" });
    const stream = opening.kind === "open" ? opening.stream : undefined;
    let stopped = 0;
    store.attach(stream as NonNullable<typeof stream>, {
      stop: () => stopped++,
      renew: async () => undefined,
    });
    const key = stream?.resumeKey ?? "";
    for (const shown of [
      { path: asked.path, origin: "", lastEventId: "" },
      { path: asked.path, origin: "https://evil.example", lastEventId: `${key}.3` },
      { path: "/v2/commands/completions", origin: asked.origin, lastEventId: `${key}.3` },
      { path: asked.path, origin: asked.origin, lastEventId: "" },
    ]) {
      assert.equal(store.open(ticket, shown).kind, "refused", JSON.stringify(shown));
      assert.equal(store.take(ticket, shown), undefined, "nor handed to another worker");
    }
    assert.equal(stopped, 0, "its reader reads on");
    assert.equal(store.opened(ticket), stream);
    const again = store.open(ticket, { path: asked.path, origin: asked.origin, lastEventId: `${key}.3` });
    assert.equal(again.kind, "open", "its own client's reconnect still gets in");
  });
});
