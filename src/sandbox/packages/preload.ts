import { SAMPLE_PACKAGE_ID, sampleDalf } from "../sample-package/index.js";
import { archivedPackage } from "./dar-reader.js";
import type { PackageStore } from "./package-store.js";

/**
 * Puts the sample package in the store and vets it on every synchronizer, as if its DAR had
 * been uploaded with vetting at start: the command engine's models need it vetted.
 */
export function preloadSamplePackage(store: PackageStore): void {
  const sample = archivedPackage("gateway-samples.dalf", sampleDalf);
  store.add([sample]);
  for (const synchronizerId of store.synchronizerIds) {
    store.applyVetting(synchronizerId, new Map([[SAMPLE_PACKAGE_ID, {}]]));
  }
}
