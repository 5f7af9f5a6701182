// The few HTTP API calls the demo makes, with the x-api-key header.

export class ApiCallError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`${method} ${path} answered ${status}: ${JSON.stringify(body)}`);
  }
}

export type Json = Record<string, unknown>;

export class GatewayClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  /** Sends one request; any answer outside 2xx throws an ApiCallError. */
  async request<T = Json>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(this.baseUrl + path, {
      method,
      headers: {
        'x-api-key': this.apiKey,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let json: unknown = text;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    if (!res.ok) throw new ApiCallError(method, path, res.status, json);
    return json as T;
  }

  /** GET /readyz: the daemon is up and its SIP engine is ready. */
  async ready(): Promise<boolean> {
    try {
      const res = await fetch(`${this.baseUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
      return res.ok;
    } catch {
      return false;
    }
  }
}
