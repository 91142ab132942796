import http from "node:http";
import https from "node:https";

export interface JsonAnswer {
  status: number;
  body: string;
}

/**
 * The load tool's HTTP client of a JSON Ledger API server: node:http(s) over a fixed number of
 * keep-alive connections (bench/lib/http-client.ts says why not `fetch`). A request past them
 * waits for one; in the open model that wait is part of its latency, as a user's would be.
 */
export class JsonClient {
  private readonly agent: http.Agent;
  private readonly transport: typeof http | typeof https;

  constructor(
    private readonly base: string,
    connections: number,
  ) {
    const secure = base.startsWith("https:");
    this.transport = secure ? https : http;
    this.agent = secure
      ? new https.Agent({ keepAlive: true, maxSockets: connections })
      : new http.Agent({ keepAlive: true, maxSockets: connections });
  }

  request(method: string, path: string, token: string, body?: unknown): Promise<JsonAnswer> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = this.transport.request(
        `${this.base}${path}`,
        {
          method,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${token}`,
            ...(payload && { "content-type": "application/json", "content-length": payload.length }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  /** The parsed JSON answer of a request that must succeed, or an error naming it and what came back. */
  async json<T>(method: string, path: string, token: string, body?: unknown): Promise<T> {
    const answer = await this.request(method, path, token, body);
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`${method} ${path} answered ${errorCode(answer)}: ${answer.body.slice(0, 300)}`);
    return JSON.parse(answer.body) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** How a failed answer is counted: the HTTP status and the JsCantonError's `code` when it has one. */
export function errorCode(answer: JsonAnswer): string {
  try {
    const code = (JSON.parse(answer.body) as { code?: unknown }).code;
    if (typeof code === "string") return `${answer.status} ${code}`;
  } catch {
    // Not JSON (a proxy's page, a 400 in text): the status says it.
  }
  return `HTTP ${answer.status}`;
}

/** A request that got no answer: the socket's error code. */
export const networkErrorCode = (error: unknown): string =>
  `network ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
