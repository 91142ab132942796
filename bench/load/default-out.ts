import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Where a run's results go without `--out`: `$XDG_STATE_HOME/ledger-json-gateway/bench`
 * (`~/.local/state/...` when unset), the XDG place for what a program keeps between runs and a
 * user may want back, such as an earlier run to `--compare` with. Not the working directory: a
 * run from a checkout would leave an untracked folder in it; not the OS temp folder: a reboot
 * would take the runs to compare with. The tool prints the paths it wrote.
 */
export function defaultOutDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME?.startsWith("/") ? env.XDG_STATE_HOME : join(homedir(), ".local", "state");
  return join(state, "ledger-json-gateway", "bench");
}
