export { DemandGate, type Watermarks } from "./backpressure.js";
export { elementLimit } from "./elementLimit.js";
export { errorFrame } from "./errorFrame.js";
export {
  ElementLimitExceededError,
  endReasonOf,
  IdleTimeoutError,
  type StreamEndReason,
  StreamPolicyError,
} from "./errors.js";
export { type IdleTimeoutOptions, idleTimeout, idleTimeoutError } from "./idleTimeout.js";
export { mapInOrder } from "./mapInOrder.js";
export { type StreamEnd, streamEnd } from "./streamEnd.js";
