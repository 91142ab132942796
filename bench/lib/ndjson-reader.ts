import http from "node:http";

export interface NdjsonRead {
  elements: number;
  /** ms from the request to the first element parsed. */
  firstElementMs: number;
}

/**
 * Reads a list twin streamed as NDJSON (`Accept: application/x-ndjson`) to its end over node:http
 * (see http-client.ts for why not fetch), parsing each line as it arrives, as a client would.
 */
export function readNdjson(
  url: string,
  token: string,
  body: unknown,
  onElement: (element: unknown) => void,
): Promise<NdjsonRead> {
  const started = performance.now();
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/x-ndjson",
          "content-type": "application/json",
          "content-length": payload.length,
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`${url} answered ${res.statusCode}`));
          return;
        }
        let partial = "";
        let elements = 0;
        let firstElementMs = -1;
        res.setEncoding("utf8");
        res.on("data", (text: string) => {
          const lines = (partial + text).split("\n");
          partial = lines.pop() ?? "";
          for (const line of lines) {
            onElement(JSON.parse(line));
            elements += 1;
            if (firstElementMs < 0) firstElementMs = performance.now() - started;
          }
        });
        res.on("end", () => {
          if (partial !== "") reject(new Error(`${url}: the answer ended inside a line`));
          else resolve({ elements, firstElementMs });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}
