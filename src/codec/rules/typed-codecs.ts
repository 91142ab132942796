import type { TypeConName, TypedValueCodec, ValueCodec } from "../../lf/index.js";
import type { TypedCodecName } from "./message-rules.js";

/**
 * The converter of one Daml field's value: the ValueCodec entry point its rule names, for
 * the template or interface `owner` (and the choice, for choice codecs).
 */
export function typedCodecOf(
  values: ValueCodec,
  codec: TypedCodecName,
  owner: TypeConName,
  choice: string,
): TypedValueCodec {
  switch (codec) {
    case "templatePayload":
      return values.templatePayload(owner);
    case "contractKey":
      return values.contractKey(owner);
    case "interfaceView":
      return values.interfaceView(owner);
    case "choiceArgument":
      return values.choiceArgument(owner, choice);
    case "choiceResult":
      return values.choiceResult(owner, choice);
  }
}
