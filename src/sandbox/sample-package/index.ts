/**
 * The sample package as the sandbox publishes it: a real Daml-LF 2.3 archive (2.3 because
 * `Account:Account` has a contract key) and a DAR around it. Encoding is deterministic, so
 * the package id is the same on every run and every machine.
 */
import {
  encodePackage,
  instantiatePackage,
  type PackageSignature,
  type TypeConName,
  writeDar,
} from "../../lf/index.js";
import { SAMPLE_PACKAGE_NAME, SAMPLE_PACKAGE_VERSION, samplePackageDefinition } from "./definition.js";

export { SAMPLE_PACKAGE_NAME, SAMPLE_PACKAGE_VERSION, samplePackageDefinition } from "./definition.js";

const encoded = encodePackage(samplePackageDefinition, { lfVersion: "2.3" });

export const SAMPLE_PACKAGE_ID: string = encoded.packageId;
const SAMPLE_LF_VERSION = encoded.lfVersion;
/** The .dalf (serialized Archive) of the sample package. */
export const sampleDalf: Uint8Array = encoded.dalf;
/** The DAR the sandbox preloads and serves back. */
export const sampleDar: Uint8Array = writeDar({
  name: SAMPLE_PACKAGE_NAME,
  version: SAMPLE_PACKAGE_VERSION,
  packageId: SAMPLE_PACKAGE_ID,
  dalf: sampleDalf,
});

/** The signatures the gateway decodes from `sampleDar`, without decoding it. */
export const samplePackageSignature: PackageSignature = instantiatePackage(
  samplePackageDefinition,
  SAMPLE_PACKAGE_ID,
  SAMPLE_LF_VERSION,
);

const id = (moduleName: string, entityName: string): TypeConName => ({
  packageId: SAMPLE_PACKAGE_ID,
  moduleName,
  entityName,
});

/** Identifiers of the sample package's templates and interface, with the real package id. */
export const sampleIds = {
  iou: id("Iou", "Iou"),
  asset: id("Iou", "Asset"),
  account: id("Account", "Account"),
  allTypes: id("Types", "AllTypes"),
  tick: id("Bench", "Tick"),
} as const;
