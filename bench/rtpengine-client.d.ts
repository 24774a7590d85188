/** The npm rtpengine-client ships no types; the benchmark uses its constructor only by name. */
declare module 'rtpengine-client' {
  export class Client {
    constructor(options?: { timeout?: number; port?: number; host?: string });
  }
}
