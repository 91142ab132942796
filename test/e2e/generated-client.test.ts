import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Ajv } from "ajv";
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript";
import ts from "typescript";
import WebSocket from "ws";
import { parse } from "yaml";
import { projectRoot } from "../../src/proto/project-root.js";
import { signToken } from "../jwt/test-tokens.js";
import { type Stack, startStack } from "../support/stack.js";
import { withoutNulls } from "./canton-shapes.js";
import { listCompletions } from "./generated-client/completions-call.js";
import { allocate, createIouTransaction, userFor } from "./ledger-client.js";

// biome-ignore lint/suspicious/noExplicitAny: the served documents, read loosely
type Json = Record<string, any>;

/**
 * Issue 36, literally: a client generated from Canton 3.5.10's OpenAPI by a widely used
 * generator (openapi-typescript's types, called with openapi-fetch) reads
 * /v2/commands/command-completions, and the WebSocket channel is driven from the AsyncAPI
 * document as a generated client would (no TypeScript generator for AsyncAPI is as standard).
 *
 * Generated from what: the gateway's own /docs/openapi in 3.5.10 mode, at test time, after
 * checking that it lists exactly 3.5.10's operations as the repository holds them
 * (schemas/operations.json, written from openapi-3.5.10.yaml by
 * scripts/import-reference-schemas.ts; the shapes in it come from schemas/components.json, from
 * the same spec). That document is what a client of the gateway generates from, it needs
 * nothing outside the repository (CI has no copy of Canton's spec), and a gateway that dropped
 * the operation or changed its shape changes it, which fails the type check below. A separate
 * extract of the spec would check the call against the spec but not against what the gateway
 * tells its clients.
 */
const RELEASE = "3.5.10";
const RELEASE_SPEC = (
  JSON.parse(readFileSync(join(projectRoot(), "schemas", "operations.json"), "utf8")) as Record<
    string,
    { apiVersion: string; operations: Record<string, unknown>; channels: Record<string, unknown> }
  >
)[RELEASE]!;
const CALL_SITE = join(projectRoot(), "test", "e2e", "generated-client", "completions-call.ts");
/** Canton's operation ids of the channel, which generated clients name their methods by. */
const SEND = "sendV2CommandsCommand-completions";
const RECEIVE = "onV2CommandsCommand-completions";

/** `METHOD path` of every operation a document lists, less the gateway's own routes. */
function cantonOperations(document: Json): string[] {
  const own = (op: string) =>
    /^GET \/(metrics|docs\/)/.test(op) ||
    op.includes("stream-ticket") ||
    (op.startsWith("GET ") && op.slice(4) in RELEASE_SPEC.channels);
  return Object.entries(document.paths as Json)
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
    .filter((op) => !own(op));
}

/**
 * The call site as the repository holds it, compiled with the project's strictness beside the
 * types that openapi-typescript generates from a document, under the name of the stand-in they
 * replace (generated-client/openapi-paths.ts), in a folder of its own that reaches the project's
 * node_modules.
 */
class CallSiteCheck {
  private readonly dir = mkdtempSync(join(tmpdir(), "generated-client-"));
  /** The last program, whose unchanged files (TypeScript's libs, Node's types) the next reuses. */
  private previous: ts.Program | undefined;

  constructor() {
    copyFileSync(CALL_SITE, join(this.dir, "completions-call.ts"));
    writeFileSync(join(this.dir, "package.json"), JSON.stringify({ type: "module" }));
    symlinkSync(join(projectRoot(), "node_modules"), join(this.dir, "node_modules"));
  }

  /** The type errors (each one's first line); none when the call fits the document. */
  async errors(document: Json): Promise<string[]> {
    const generated = astToString(await openapiTS(document as OpenAPI3, { silent: true }));
    writeFileSync(join(this.dir, "openapi-paths.ts"), generated);
    const program = ts.createProgram(
      [join(this.dir, "completions-call.ts")],
      {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        lib: ["lib.es2023.d.ts"],
        types: ["node"],
        typeRoots: [join(projectRoot(), "node_modules", "@types")],
        strict: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: true,
        noEmit: true,
      },
      undefined,
      this.previous,
    );
    this.previous = program;
    return ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n").split("\n")[0]!);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe(`a client generated from the gateway's OpenAPI (Canton ${RELEASE}) reads command-completions`, {
  timeout: 60_000,
}, () => {
  let stack: Stack;
  let bank: string;
  let token: string;
  const commandId = "generated-client-1";

  before(async () => {
    stack = await startStack(["--ledger.api-version", RELEASE], {}, { sandbox: { apiVersion: RELEASE } });
    bank = await allocate(stack, "bank");
    await userFor(stack, "bank-user", [bank]);
    // As production's: a token valid five minutes (signToken's default).
    token = signToken("bank-user");
    const reply = await createIouTransaction(stack, token, commandId, {
      issuer: bank,
      owner: bank,
      currency: "EUR",
      amount: "1",
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
  });
  after(() => stack.stop());

  const served = async (name: "openapi" | "asyncapi") => {
    const res = await stack.request(`/docs/${name}`, { token: null });
    assert.equal(res.status, 200);
    return parse(await res.text()) as Json;
  };

  it(`lists exactly ${RELEASE}'s operations, and the types generated from it check the call site`, async (t) => {
    const document = await served("openapi");
    assert.equal(document.info.version, RELEASE_SPEC.apiVersion);
    assert.deepEqual(cantonOperations(document).sort(), Object.keys(RELEASE_SPEC.operations).sort());
    const check = new CallSiteCheck();
    t.after(() => check.remove());
    assert.deepEqual(await check.errors(document), []);

    // The check can fail: the same call site against the document without the operation, with
    // the body's field renamed, with a query parameter renamed, and with the answer's field renamed.
    const path = "/v2/commands/command-completions";
    const changed = (change: (d: Json) => void) => {
      const copy = structuredClone(document);
      change(copy);
      return check.errors(copy);
    };
    const dropped = await changed((d) => delete d.paths[path].post);
    assert.ok(
      dropped.some((e) => e.includes(`"${path}"`)),
      dropped.join("\n"),
    );
    const renamed = await changed((d) => {
      const request = d.components.schemas.GetCompletionsRequest;
      request.properties.partyIds = request.properties.parties;
      delete request.properties.parties;
    });
    assert.ok(
      renamed.some((e) => e.includes("'parties'")),
      renamed.join("\n"),
    );
    const query = await changed((d) => {
      d.paths[path].post.parameters.find((p: Json) => p.name === "limit").name = "max";
    });
    assert.ok(
      query.some((e) => e.includes("'limit'")),
      query.join("\n"),
    );
    const answer = await changed((d) => {
      const completion = d.components.schemas.Completion1;
      completion.properties.id = completion.properties.commandId;
      delete completion.properties.commandId;
      completion.required = completion.required.map((f: string) => (f === "commandId" ? "id" : f));
    });
    assert.ok(
      answer.some((e) => e.includes("'commandId'")),
      answer.join("\n"),
    );
  });

  it("reads the completion of a submitted command over HTTP through the generated client", async () => {
    const page = await listCompletions(stack.url, token, {
      parties: [bank],
      beginExclusive: 0,
      limit: 1,
      idleMs: 300,
    });
    assert.equal(page.status, 200, JSON.stringify(page.error));
    assert.deepEqual(page.commandIds, [commandId]);
  });

  it("streams it over the WebSocket channel the AsyncAPI document names, each frame of its schema", async () => {
    const document = await served("asyncapi");
    const found = Object.entries(document.channels as Json).find(
      ([, channel]) => channel.publish?.operationId === SEND && channel.subscribe?.operationId === RECEIVE,
    );
    assert.ok(found, `a channel with operations ${SEND} and ${RECEIVE}`);
    const [address, channel] = found;
    // A channel's message is one $ref or a oneOf of them; validated in the document they name.
    const refsOf = (message: Json): string[] => (message.oneOf ?? [message]).map((m: Json) => m.$ref);
    // Not strict: the documents' objects carry AsyncAPI's keywords (a message's name, summary),
    // and formats of OpenAPI's (int64) that JSON Schema has not.
    const ajv = new Ajv({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: "asyncapi", components: document.components });
    const schemaOf = (refs: string[]) =>
      ajv.compile({ oneOf: refs.map((ref) => ({ $ref: `asyncapi${ref}/payload` })) });
    const sent = schemaOf(refsOf(channel.publish.message));
    const received = schemaOf(refsOf(channel.subscribe.message));
    const requestRef = refsOf(channel.publish.message).find((r) => r.endsWith("/GetCompletionsRequest"));
    assert.equal(requestRef, "#/components/messages/GetCompletionsRequest");

    const request = { parties: [bank], beginExclusive: 0 };
    assert.ok(sent(request), JSON.stringify(sent.errors));
    const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}${address}`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    const frames: Json[] = [];
    const completion = await new Promise<Json>((resolve, reject) => {
      socket.on("open", () => socket.send(JSON.stringify(request)));
      socket.on("message", (data: Buffer) => {
        const frame = JSON.parse(data.toString("utf8")) as Json;
        frames.push(frame);
        const value = frame.completionResponse?.Completion?.value;
        if (value !== undefined) resolve(value);
      });
      socket.on("close", (code) => reject(new Error(`closed ${code} after ${JSON.stringify(frames)}`)));
      socket.on("error", reject);
    });
    socket.close(1000);
    assert.equal(socket.protocol, "daml.ws.auth");
    assert.equal(completion.commandId, commandId);
    assert.deepEqual(completion.actAs, [bank]);
    // Canton's JSON (the gateway's too) writes an absent optional field as null, which the
    // documents (OpenAPI 3.0 shapes, no `nullable`) do not say: a client reads it as absent.
    for (const frame of frames) {
      assert.ok(
        received(withoutNulls(frame)),
        `${JSON.stringify(received.errors)} in ${JSON.stringify(frame)}`,
      );
    }
    // The schema is not vacuous: a completion without its command id is not of it.
    const { commandId: _, ...withoutId } = completion;
    assert.equal(received({ completionResponse: { Completion: { value: withoutId } } }), false);
  });
});
