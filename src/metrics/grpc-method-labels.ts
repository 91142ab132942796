import protobuf from "protobufjs";

import { LEDGER_API_PACKAGE } from "../proto/ledger-api-protos.js";

/** A gRPC method as the `method` label names it, and whether it streams its answers. */
export interface GrpcMethodLabel {
  readonly label: string;
  readonly streaming: boolean;
}

/**
 * `Service/Method` of every RPC of the Ledger API, as the ledger client names calls
 * (`admin.PartyManagementService/AllocateParty`): the values of the gRPC `method` label, read
 * from the protos so that a method the gateway starts calling has its series from the start.
 */
export function grpcMethodLabels(root: protobuf.Root): GrpcMethodLabel[] {
  const labels: GrpcMethodLabel[] = [];
  const walk = (namespace: protobuf.Namespace, prefix: string) => {
    for (const nested of namespace.nestedArray) {
      if (nested instanceof protobuf.Service) {
        for (const [name, method] of Object.entries(nested.methods))
          labels.push({
            label: `${prefix}${nested.name}/${name}`,
            streaming: method.responseStream === true,
          });
      } else if (nested instanceof protobuf.Namespace && !(nested instanceof protobuf.Type)) {
        walk(nested, `${prefix}${nested.name}.`);
      }
    }
  };
  walk(root.lookup(LEDGER_API_PACKAGE) as protobuf.Namespace, "");
  return labels;
}
