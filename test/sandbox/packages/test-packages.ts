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

/**
 * A package without templates, interfaces or serializable data types: a utility package in
 * Canton's terms. `marker` names its one (unserializable) data type, so that two releases of
 * the same library differ in content and so in package id.
 */
export function utilityDefinition(name: string, version: string, marker: string): PackageDefinition {
  return {
    name,
    version,
    modules: [
      {
        name: "Lib",
        dataTypes: [
          {
            name: `Internal${marker}`,
            params: [],
            serializable: false,
            body: { kind: "record", fields: [{ name: "n", type: t.int64 }] },
          },
        ],
        templates: [],
        interfaces: [],
      },
    ],
  };
}

/**
 * A DAR laid out as damlc writes one: the main package with the `daml-prim` and `daml-stdlib` of
 * the SDK release that built it. Both libraries carry the same name and version in every release
 * while their content, and so their ids, change.
 */
export function darWithSdkLibraries(
  main: PackageDefinition,
  release: string,
  prim: PackageDefinition = utilityDefinition("daml-prim", "0.0.0", release),
): { dar: Uint8Array; mainId: string; primId: string; stdlibId: string } {
  const encode = (definition: PackageDefinition) => encodePackage(definition, { lfVersion: "2.2" });
  const mainPackage = encode(main);
  const primPackage = encode(prim);
  const stdlibPackage = encode(utilityDefinition("daml-stdlib", "0.0.0", release));
  const dar = writeDar(
    { name: main.name, version: main.version, packageId: mainPackage.packageId, dalf: mainPackage.dalf },
    [
      { name: "daml-prim", packageId: primPackage.packageId, dalf: primPackage.dalf },
      { name: "daml-stdlib", packageId: stdlibPackage.packageId, dalf: stdlibPackage.dalf },
    ],
  );
  return {
    dar,
    mainId: mainPackage.packageId,
    primId: primPackage.packageId,
    stdlibId: stdlibPackage.packageId,
  };
}
