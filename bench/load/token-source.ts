import { execFile } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { promisify } from "node:util";

const exec = promisify(execFile);

/**
 * The bearer token of a run that may outlive it: `--token-file` is read again whenever the file
 * changes (something else renews it), `--token-command` is run again before the token's `exp`
 * (Canton refuses tokens valid for more than 5 minutes, and a run may take longer). The token is
 * never printed, logged or written anywhere: failures name the file or the exit status only.
 */
export interface TokenSource {
  current(): string;
  /** Called with each new token (streams that can be renewed in band take it). */
  onChange(listener: (token: string) => void): void;
  /** Stops watching and renewing. */
  close(): void;
}

/**
 * Where a token comes from: a file, or a command (for one party of several, run with that party
 * in its environment as LOAD_PARTY, so that one command can print each party's token).
 */
export type TokenFrom = { file: string } | { command: string; party?: string };

/** The `exp` claim of a JWT, in ms since the epoch, when it has one. */
export function tokenExpiry(token: string): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));
    return typeof payload.exp === "number" ? payload.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** How long before `exp` a command's token is renewed: a tenth of its life, 5 to 30 s. */
function renewalDelay(token: string): number | undefined {
  const exp = tokenExpiry(token);
  if (exp === undefined) return undefined;
  const life = exp - Date.now();
  const margin = Math.min(30_000, Math.max(5_000, life / 10));
  return Math.max(1_000, life - margin);
}

export async function openTokenSource(from: TokenFrom, warn: (line: string) => void): Promise<TokenSource> {
  return "file" in from ? fileToken(from.file, warn) : commandToken(from.command, warn, from.party);
}

function readToken(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new Error(`cannot read --token-file ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
  if (text === "") throw new Error(`--token-file ${path} is empty`);
  return text;
}

function fileToken(path: string, warn: (line: string) => void): TokenSource {
  let token = readToken(path);
  const listeners: ((token: string) => void)[] = [];
  const stamp = () => {
    const stat = statSync(path, { throwIfNoEntry: false });
    return stat ? `${stat.mtimeMs}:${stat.size}` : "gone";
  };
  let seen = stamp();
  const timer = setInterval(() => {
    const now = stamp();
    if (now === seen) return;
    seen = now;
    try {
      token = readToken(path);
      warn(`token: --token-file ${path} changed, read again`);
      for (const listener of listeners) listener(token);
    } catch (error) {
      warn(`token: ${(error as Error).message}; keeping the one read before`);
    }
  }, 1000);
  timer.unref();
  return {
    current: () => token,
    onChange: (listener) => listeners.push(listener),
    close: () => clearInterval(timer),
  };
}

async function runCommand(command: string, party: string | undefined): Promise<string> {
  try {
    const { stdout } = await exec("sh", ["-c", command], {
      timeout: 30_000,
      maxBuffer: 1 << 20,
      ...(party !== undefined && { env: { ...process.env, LOAD_PARTY: party } }),
    });
    const token = stdout.trim();
    if (token === "") throw new Error("printed nothing");
    return token;
  } catch (error) {
    const status = (error as { code?: unknown }).code;
    const flag = party === undefined ? "--token-command" : `--party-token-command for ${party}`;
    throw new Error(
      `${flag} failed (${status === undefined ? (error as Error).message : `exit status ${String(status)}`})`,
    );
  }
}

async function commandToken(
  command: string,
  warn: (line: string) => void,
  party: string | undefined,
): Promise<TokenSource> {
  let token = await runCommand(command, party);
  const listeners: ((token: string) => void)[] = [];
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const schedule = () => {
    const delay = renewalDelay(token);
    if (delay === undefined || closed) return;
    timer = setTimeout(async () => {
      try {
        token = await runCommand(command, party);
        warn(`token: renewed by --${party === undefined ? "" : "party-"}token-command before it expired`);
        for (const listener of listeners) listener(token);
      } catch (error) {
        warn(`token: ${(error as Error).message}; trying again in 5 s`);
        timer = setTimeout(schedule, 5_000);
        timer.unref();
        return;
      }
      schedule();
    }, delay);
    timer.unref();
  };
  schedule();
  return {
    current: () => token,
    onChange: (listener) => listeners.push(listener),
    close: () => {
      closed = true;
      clearTimeout(timer);
    },
  };
}
