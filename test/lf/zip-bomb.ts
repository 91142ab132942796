import { Zip, ZipDeflate, ZipPassThrough } from "fflate";
import { MANIFEST_PATH } from "../../src/lf/dar.js";

/**
 * A DAR whose listed main .dalf is `inflatedMiB` MiB of zeros, deflated: a zip bomb of about a
 * thousandth of its inflated size. Built by streaming, so the test never holds the inflated bytes.
 */
export function zipBombDar(inflatedMiB: number): Uint8Array {
  const parts: Uint8Array[] = [];
  const zip = new Zip((error, chunk) => {
    if (error) throw error;
    parts.push(chunk);
  });
  const main = "bomb-1.0.0/bomb.dalf";
  const manifest = new ZipPassThrough(MANIFEST_PATH);
  zip.add(manifest);
  manifest.push(
    new TextEncoder().encode(`Manifest-Version: 1.0\nMain-Dalf: ${main}\nDalfs: ${main}\nFormat: daml-lf\n`),
    true,
  );
  const dalf = new ZipDeflate(main, { level: 9 });
  zip.add(dalf);
  const zeros = new Uint8Array(1024 * 1024);
  for (let i = 0; i < inflatedMiB; i++) dalf.push(zeros, i === inflatedMiB - 1);
  zip.end();
  return Buffer.concat(parts);
}
