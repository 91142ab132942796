import protobuf from "protobufjs";

const API_PACKAGE = "com.daml.ledger.api.v2";

/**
 * `Service/Method` of every RPC of the Ledger API, as the ledger client names calls
 * (`admin.PartyManagementService/AllocateParty`): the values of the gRPC `method` label, read
 * from the protos so that a method the gateway starts calling has its series from the start.
 */
export function grpcMethodLabels(root: protobuf.Root): string[] {
  const labels: string[] = [];
  const walk = (namespace: protobuf.Namespace, prefix: string) => {
    for (const nested of namespace.nestedArray) {
      if (nested instanceof protobuf.Service) {
        for (const method of Object.keys(nested.methods)) labels.push(`${prefix}${nested.name}/${method}`);
      } else if (nested instanceof protobuf.Namespace && !(nested instanceof protobuf.Type)) {
        walk(nested, `${prefix}${nested.name}.`);
      }
    }
  };
  walk(root.lookup(API_PACKAGE) as protobuf.Namespace, "");
  return labels;
}
