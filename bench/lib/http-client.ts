import http from "node:http";

/**
 * The bench's HTTP client of the gateway: node:http over keep-alive connections. Not `fetch`:
 * undici's WHATWG layer (streams, Headers, Response objects) costs the client process 140-300 µs
 * of CPU per request against 40-70 µs for node:http (measured here, GET and submit-and-wait at
 * concurrency 16), and on a 2-core machine that CPU comes out of what the gateway and the ledger
 * get: the throughput ratio measured the client as much as the gateway. node:http is what a Node
 * service calling the gateway would use; `fetch` sends the body in a second write, too.
 */
export interface HttpAnswer {
  status: number;
  body: Buffer;
}

export class BenchHttpClient {
  private readonly agent: http.Agent;

  /** `connections`: kept open and reused, one per concurrent request. */
  constructor(
    private readonly base: string,
    connections: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  }

  request(path: string, options: { token: string; body?: string }): Promise<HttpAnswer> {
    const body = options.body === undefined ? undefined : Buffer.from(options.body);
    return new Promise((resolve, reject) => {
      const req = http.request(
        `${this.base}${path}`,
        {
          method: body === undefined ? "GET" : "POST",
          agent: this.agent,
          headers: {
            authorization: `Bearer ${options.token}`,
            ...(body && { "content-type": "application/json", "content-length": body.length }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  /** The answer's body, or an error naming the request and what came back. */
  async ok(path: string, options: { token: string; body?: string }): Promise<Buffer> {
    const answer = await this.request(path, options);
    if (answer.status !== 200)
      throw new Error(`${path} answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
    return answer.body;
  }

  close(): void {
    this.agent.destroy();
  }
}
