import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { partyFilter } from "../support/update-requests.js";

type Page = Record<string, unknown> & { nextPageToken?: string };

/**
 * Paged endpoints streamed (issue 22 item 2): with Accept: application/x-ndjson, every element
 * of the page asked for and of every page after it, one per line, the same as walking the pages.
 */
describe("paged endpoints streamed as NDJSON", () => {
  const TICKS = 7;
  let stack: Stack;
  let party: string;
  let reader: string;
  let offset: number;
  before(async () => {
    stack = await startStack(
      [],
      {},
      { sandbox: { preload: { ticks: TICKS, payloadBytes: 16, party: "paged" } } },
    );
    const { participantId } = (await (await stack.request("/v2/parties/participant-id")).json()) as {
      participantId: string;
    };
    party = `paged::${participantId.split("::")[1]}`;
    reader = tokenFor(`actAs-${party}`);
    for (let i = 0; i < 5; i++) {
      await stack.request("/v2/parties", {
        method: "POST",
        body: JSON.stringify({ partyIdHint: `paged-${i}` }),
      });
      await stack.request("/v2/users", {
        method: "POST",
        body: JSON.stringify({ user: { id: `paged-user-${i}` } }),
      });
    }
    offset = ((await (await stack.request("/v2/state/ledger-end")).json()) as { offset: number }).offset;
  });
  after(() => stack.stop());

  /** Every element of every page from `first` on, page by page, as a client of the page API reads them. */
  async function walk(first: (token: string) => Promise<Response>, items: string): Promise<unknown[]> {
    const all: unknown[] = [];
    let token = "";
    let pages = 0;
    do {
      const page = (await (await first(token)).json()) as Page;
      all.push(...((page[items] as unknown[]) ?? []));
      token = page.nextPageToken ?? "";
      pages++;
    } while (token !== "");
    assert.ok(pages > 2, `${pages} pages`);
    return all;
  }

  const ndjson = async (reply: Response): Promise<unknown[]> => {
    assert.equal(reply.status, 200);
    assert.equal(reply.headers.get("content-type"), "application/x-ndjson");
    const text = await reply.text();
    assert.ok(text.endsWith("\n"));
    return text
      .split("\n")
      .slice(0, -1)
      .map((line) => JSON.parse(line) as unknown);
  };
  const accept = { accept: "application/x-ndjson" };

  it("streams every party and every user of every page", async () => {
    const parties = await walk(
      (token) => stack.request(`/v2/parties?pageSize=2&pageToken=${token}`),
      "partyDetails",
    );
    assert.deepEqual(
      await ndjson(await stack.request("/v2/parties?pageSize=2", { headers: accept })),
      parties,
    );
    const users = await walk((token) => stack.request(`/v2/users?pageSize=2&pageToken=${token}`), "users");
    assert.deepEqual(await ndjson(await stack.request("/v2/users?pageSize=2", { headers: accept })), users);
    // Without the Accept: the one page, as Canton answers.
    const one = (await (await stack.request("/v2/parties?pageSize=2")).json()) as Page;
    assert.equal((one.partyDetails as unknown[]).length, 2);
  });

  it("streams the active contracts of every page", async () => {
    const request = (token: string) => ({
      activeAtOffset: offset,
      eventFormat: partyFilter(party),
      maxPageSize: 3,
      ...(token === "" ? {} : { pageToken: token }),
    });
    const page = (token: string) =>
      stack.request("/v2/state/active-contracts-page", {
        method: "POST",
        token: reader,
        body: JSON.stringify(request(token)),
      });
    const contracts = await walk(page, "activeContracts");
    assert.equal(contracts.length, TICKS);
    const streamed = await stack.request("/v2/state/active-contracts-page", {
      method: "POST",
      token: reader,
      headers: accept,
      body: JSON.stringify(request("")),
    });
    assert.deepEqual(await ndjson(streamed), contracts);
  });

  it("answers a refused reader with its status, not a 200", async () => {
    const refused = await stack.request("/v2/users?pageSize=2", {
      token: tokenFor("nobody-at-all"),
      headers: accept,
    });
    assert.equal(refused.status, 403);
    assert.equal(typeof ((await refused.json()) as { code?: unknown }).code, "string");
  });
});
