import type { StreamPosition } from "../streams/resume-on-loss.js";

type Json = Record<string, unknown>;

/** Where the offset of the element transcoded last is known without parsing its text. */
interface KnownOffsets {
  /** The element's offset when it is the one known; undefined otherwise. */
  offsetOf(element: string): number | undefined;
}

/**
 * The offset inside `{<oneof>: {<Case>: {value: {offset}}}}`, the shape of update and completion
 * elements: `known`'s when it knows the element (the transcoder read it from its bytes: see
 * LedgerJson.transcoded), else parsed from the text.
 */
export function caseOffset(oneof: string, known?: KnownOffsets) {
  return (element: string): number | undefined => {
    const offset = known?.offsetOf(element);
    if (offset !== undefined) return offset;
    const cases = (JSON.parse(element) as Json)[oneof] as
      | Record<string, { value?: { offset?: number } }>
      | undefined;
    const [content] = Object.values(cases ?? {});
    return content?.value?.offset;
  };
}

/** An update's or a completion stream's checkpoint element: the oneof's case comes first. */
const CHECKPOINT = /^\{"[A-Za-z]+":\{"OffsetCheckpoint"/;

export function isOffsetCheckpoint(element: string): boolean {
  return CHECKPOINT.test(element);
}

/** Where an update or completion element stands (parsed: for the few elements a resume looks at). */
export function casePosition(oneof: string): (element: string) => StreamPosition | undefined {
  const offsetOf = caseOffset(oneof);
  return (element) => {
    const offset = offsetOf(element);
    return offset === undefined ? undefined : { offset, checkpoint: isOffsetCheckpoint(element) };
  };
}
