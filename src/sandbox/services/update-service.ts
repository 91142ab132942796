import type {
  GetUpdateByHashRequest__Output,
  GetUpdateByIdRequest__Output,
  GetUpdateByOffsetRequest__Output,
  GetUpdatesPageRequest__Output,
  GetUpdatesPageResponse,
  GetUpdatesRequest__Output,
  UpdateFormat__Output,
} from "../../proto/ledger-api-types.js";
import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation, StreamSink } from "../grpc-handler.js";
import { ledgerErrors } from "../ledger/ledger-errors.js";
import type { LedgerRuntime } from "../ledger/ledger-runtime.js";
import { decodeToken, encodeToken } from "../ledger/reads/page-token.js";
import { checkpointMessage, streamUpdates, streamUpdatesDescending } from "../ledger/reads/update-feed.js";
import { type CompiledUpdateFormat, compileUpdateFormat } from "../ledger/reads/update-format.js";
import { renderUpdate, renderUpdateEncoded } from "../ledger/reads/update-renderer.js";
import type { LedgerUpdate } from "../ledger/sandbox-store.js";

/** Canton's defaults for updates pages (ledger-api.update-service). */
const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

interface PagePosition {
  /** The page covers offsets in (low, high]. */
  readonly low: number;
  readonly high: number;
}

/**
 * UpdateService: the update stream (bounded or live, ascending or descending), single updates
 * by offset, id or (Canton 3.6) the hash an external party signed (UPDATE_NOT_FOUND when nothing
 * of it is visible), and pages of updates.
 */
export function updateService(runtime: LedgerRuntime): ServiceImplementation {
  const store = runtime.ledger.store;

  async function format(message: UpdateFormat__Output | null, context: CallContext) {
    const compiled = compileUpdateFormat(runtime.registry, message);
    for (const requirement of compiled.requirements) await context.authorize(requirement);
    return compiled;
  }
  // Pruned updates are gone: a lookup finds nothing there.
  const render = (update: LedgerUpdate, compiled: CompiledUpdateFormat) =>
    update.offset <= store.latestPrunedOffset() ? undefined : renderUpdate(update, compiled, runtime.events);

  return {
    serviceName: "com.daml.ledger.api.v2.UpdateService",
    unary: {
      GetUpdateByOffset: async (request: GetUpdateByOffsetRequest__Output, context) => {
        const offset = Number(request.offset);
        if (offset <= 0)
          throw ledgerErrors.offsetOutOfRange(`Offset ${offset} in offset is not a positive integer`);
        const compiled = await format(request.updateFormat, context);
        const update = store.updateAt(offset);
        const rendered = update && render(update, compiled);
        if (rendered === undefined) throw ledgerErrors.updateNotFound(["OFFSET", String(offset)]);
        return rendered;
      },
      GetUpdateById: async (request: GetUpdateByIdRequest__Output, context) => {
        if (request.updateId === "") throw errors.missingField("update_id");
        const compiled = await format(request.updateFormat, context);
        const update = runtime.ledger.updateById(request.updateId);
        const rendered = update && render(update, compiled);
        if (rendered === undefined) throw ledgerErrors.updateNotFound(["UPDATE_ID", request.updateId]);
        return rendered;
      },
      GetUpdateByHash: async (request: GetUpdateByHashRequest__Output, context) => {
        if (request.transactionHash.length === 0) throw errors.missingField("transaction_hash");
        if (request.updateFormat === null) throw errors.missingField("update_format");
        const compiled = await format(request.updateFormat, context);
        const hash = Buffer.from(request.transactionHash);
        const update = runtime.ledger
          .updatesByTransactionHash(hash)
          .find((candidate) => candidate.kind === "transaction");
        const rendered = update && render(update, compiled);
        if (rendered === undefined)
          throw ledgerErrors.updateNotFound(["TRANSACTION_HASH", hash.toString("hex")]);
        return rendered;
      },
      GetUpdatesPage: async (
        request: GetUpdatesPageRequest__Output,
        context,
      ): Promise<GetUpdatesPageResponse> => {
        const compiled = await format(request.updateFormat, context);
        const ledgerEnd = store.ledgerEnd();
        const pruned = store.latestPrunedOffset();
        const givenBegin = optionalOffset(request.beginOffsetExclusive);
        if (givenBegin !== undefined && givenBegin < pruned) {
          throw ledgerErrors.participantPrunedDataAccessed(
            `Updates request from ${givenBegin + 1} to ${optionalOffset(request.endOffsetInclusive) ?? ledgerEnd} precedes pruned offset ${pruned}`,
            pruned,
          );
        }
        // Without a begin, the first page starts after the pruned history (Canton's dynamic lower bound).
        const begin = givenBegin ?? pruned;
        const end = optionalOffset(request.endOffsetInclusive);
        if (end !== undefined && end > ledgerEnd)
          throw ledgerErrors.offsetAfterLedgerEnd("endOffsetInclusive", end, ledgerEnd);
        if (end !== undefined && begin > end) {
          throw errors.invalidArgument("beginOffsetExclusive is after endOffsetInclusive");
        }
        const size = request.maxPageSize ?? DEFAULT_PAGE_SIZE;
        if (size <= 0 || size > MAX_PAGE_SIZE) {
          throw errors.invalidArgument(`max_page_size must be between 1 and ${MAX_PAGE_SIZE}, got ${size}`);
        }
        // A page is fixed by its first request: the token keeps the window it was cut from.
        const requestKey = JSON.stringify([begin, end, compiled.key, request.descendingOrder]);
        const token = decodeToken<PagePosition & { end: number }>(
          request.pageToken,
          requestKey,
          "page token",
        );
        const windowEnd = token?.end ?? end ?? ledgerEnd;
        const updates: object[] = [];
        let low: number;
        let high: number;
        let more: boolean;
        if (!request.descendingOrder) {
          low = token?.high ?? begin;
          high = low;
          let index = store.indexAfter(low);
          while (index < store.updates.length && updates.length < size) {
            const update = store.updates[index]!;
            if (update.offset > windowEnd) break;
            index++;
            high = update.offset;
            const rendered = render(update, compiled);
            if (rendered !== undefined) updates.push(rendered);
          }
          if (updates.length < size) high = Math.max(high, windowEnd);
          more = high < windowEnd;
        } else {
          high = token?.low ?? windowEnd;
          low = high;
          let index = store.indexAfter(high) - 1;
          while (index >= 0 && updates.length < size) {
            const update = store.updates[index]!;
            if (update.offset <= begin) break;
            index--;
            low = update.offset - 1;
            const rendered = render(update, compiled);
            if (rendered !== undefined) updates.push(rendered);
          }
          if (updates.length < size) low = Math.min(low, begin);
          more = low > begin;
        }
        return {
          updates,
          lowestPageOffsetExclusive: low,
          highestPageOffsetInclusive: high,
          ...(more ? { nextPageToken: encodeToken({ low, high, end: windowEnd }, requestKey) } : {}),
        };
      },
    },
    stream: {
      GetUpdates: async (request: GetUpdatesRequest__Output, context: CallContext, sink: StreamSink) => {
        // Canton's UpdateServiceAuthorization wraps the service: the parties are judged before
        // the offsets are (a reader of other parties gets 403, not OFFSET_AFTER_LEDGER_END).
        const compiled = await format(request.updateFormat, context);
        const begin = Number(request.beginExclusive);
        if (begin < 0)
          throw ledgerErrors.offsetOutOfRange(`Offset ${begin} in begin_exclusive is a negative integer`);
        const end = optionalOffset(request.endInclusive);
        if (request.descendingOrder && end === undefined) throw ledgerErrors.descendingOrderMissingEnd();
        if (end !== undefined && end <= 0) {
          throw ledgerErrors.offsetOutOfRange(`Offset ${end} in end_inclusive is not a positive integer`);
        }
        const ledgerEnd = store.ledgerEnd();
        if (begin > ledgerEnd) throw ledgerErrors.offsetAfterLedgerEnd("Begin", begin, ledgerEnd);
        if (end !== undefined && end > ledgerEnd)
          throw ledgerErrors.offsetAfterLedgerEnd("End", end, ledgerEnd);
        const pruned = store.latestPrunedOffset();
        // Canton checks the range even when it is empty (the gateway's admission probe is one).
        if (begin < pruned) {
          throw ledgerErrors.participantPrunedDataAccessed(
            `Updates request from ${begin + 1} to ${end ?? ledgerEnd} precedes pruned offset ${pruned}`,
            pruned,
          );
        }
        const renderOne = (update: LedgerUpdate) => renderUpdateEncoded(update, compiled, runtime.events);
        if (end !== undefined && end <= begin) return;
        if (request.descendingOrder) {
          await streamUpdatesDescending({
            store,
            sink,
            beginExclusive: begin,
            endInclusive: end!,
            render: renderOne,
          });
          return;
        }
        await streamUpdates({
          store,
          sink,
          beginExclusive: begin,
          endInclusive: end,
          render: renderOne,
          prunedError: (from, to, prunedUpTo) =>
            ledgerErrors.participantPrunedDataAccessed(
              `Updates request from ${from} to ${to} precedes pruned offset ${prunedUpTo}`,
              prunedUpTo,
            ),
          idleCheckpointTimeoutMs: runtime.idleStreamOffsetCheckpointTimeoutMs,
          checkpoint: (offset, synchronizerIds) => ({
            offsetCheckpoint: checkpointMessage(offset, synchronizerIds),
          }),
        });
      },
    },
  };
}

/** proto3 `optional int64`: absent is undefined (or null), present is a decimal string. */
function optionalOffset(value: string | null | undefined): number | undefined {
  return value === undefined || value === null ? undefined : Number(value);
}
