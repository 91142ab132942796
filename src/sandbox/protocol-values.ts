import type { TypeConName } from "../lf/index.js";

/** Small pieces of outgoing messages in the proto-loader shape. */
export interface TimestampMessage {
  readonly seconds: number;
  readonly nanos: number;
}

export function timestamp(date: Date): TimestampMessage {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: (ms - seconds * 1000) * 1_000_000 };
}

export function identifier(id: TypeConName): { packageId: string; moduleName: string; entityName: string } {
  return { packageId: id.packageId, moduleName: id.moduleName, entityName: id.entityName };
}

export const OK_STATUS = { code: 0, message: "", details: [] } as const;
