/**
 * Small packages for upload tests, written with src/lf's encoder: `test-shapes` in several
 * versions (compatible and incompatible upgrades) and DARs around them.
 */
import {
  encodePackage,
  type FieldSignature,
  type PackageDefinition,
  SELF_PACKAGE_ID,
  t,
  writeDar,
} from "../../../src/lf/index.js";

const unitRecord = (name: string) => ({
  name,
  params: [],
  serializable: true,
  body: { kind: "record" as const, fields: [] },
});

/** `Shapes:Box` {owner: Party, label: Text, ...extra} with an Archive choice. */
export function shapesDefinition(
  version: string,
  extra: FieldSignature[] = [],
  name = "test-shapes",
): PackageDefinition {
  return {
    name,
    version,
    modules: [
      {
        name: "Shapes",
        dataTypes: [
          {
            name: "Box",
            params: [],
            serializable: true,
            body: {
              kind: "record",
              fields: [{ name: "owner", type: t.party }, { name: "label", type: t.text }, ...extra],
            },
          },
          unitRecord("Archive"),
        ],
        templates: [
          {
            name: "Box",
            choices: [
              {
                name: "Archive",
                consuming: true,
                argType: t.con({ packageId: SELF_PACKAGE_ID, moduleName: "Shapes", entityName: "Archive" }),
                returnType: t.unit,
              },
            ],
            implements: [],
          },
        ],
        interfaces: [],
      },
    ],
  };
}

export interface BuiltPackage {
  readonly packageId: string;
  readonly dalf: Uint8Array;
  readonly dar: Uint8Array;
}

export function buildDar(definition: PackageDefinition): BuiltPackage {
  const encoded = encodePackage(definition, { lfVersion: "2.2" });
  const dar = writeDar({
    name: definition.name,
    version: definition.version,
    packageId: encoded.packageId,
    dalf: encoded.dalf,
  });
  return { packageId: encoded.packageId, dalf: encoded.dalf, dar };
}
