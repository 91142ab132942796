/**
 * A knip preprocessor (see knip.jsonc): drops the findings that knip.jsonc's
 * `preprocessorOptions.ignoreSymbols` names one by one, by issue type, file and symbol. knip's
 * own `ignoreIssues` works per file and issue type, which would also hide every new finding
 * of that type in the file. An entry that matches no finding is reported on stderr, so that
 * an ignore does not outlive its reason unseen.
 */

/** @param {any} data knip's reporter input: issues by type, then file (relative), then symbol; counters */
export default function scopedIgnores(data) {
  const { ignoreSymbols = {} } = data.preprocessorOptions ? JSON.parse(data.preprocessorOptions) : {};
  for (const [type, files] of Object.entries(ignoreSymbols)) {
    for (const [file, symbols] of Object.entries(files)) {
      const found = data.issues[type]?.[file] ?? {};
      for (const symbol of symbols) {
        if (found[symbol]) {
          delete found[symbol];
          data.counters[type] -= 1;
        } else {
          console.error(
            `knip.jsonc: ${type} "${symbol}" in ${file} is ignored but not found: drop the ignore`,
          );
        }
      }
      if (data.issues[type]?.[file] && Object.keys(found).length === 0) delete data.issues[type][file];
    }
  }
  return data;
}
