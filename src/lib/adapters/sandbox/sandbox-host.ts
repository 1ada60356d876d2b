import bootScript from './boot.js?raw';

/** A sandbox worker as the runtime holds it: its port, a way to end it, and how it ended. */
export interface SandboxProcess {
  readonly port: MessagePort;
  terminate(): void;
  /** Resolves with a reason when the worker crashed (the host saw an uncaught error). */
  readonly crashed: Promise<string>;
}

/** Starts sandbox workers. */
export interface SandboxSpawner {
  spawn(): Promise<SandboxProcess>;
}

/** The runtime's side of the page's sandbox host (`client/sandbox-host.ts`). */
export type ToSandboxHost =
  | { type: 'spawn'; id: number; name: string; source: string; port: MessagePort }
  | { type: 'terminate'; id: number };
export type FromSandboxHost = { type: 'exit'; id: number; message: string };

/**
 * Starts sandbox workers through the host the page attached. Workers start with `boot.js`, which
 * checks their isolation before it imports anything.
 */
export class SandboxHost implements SandboxSpawner {
  readonly #port: Promise<MessagePort>;
  readonly #crashes = new Map<number, (reason: string) => void>();
  #nextId = 1;

  constructor(port: Promise<MessagePort>) {
    this.#port = port.then((p) => {
      p.onmessage = ({ data }: MessageEvent<FromSandboxHost>) => {
        if (data?.type !== 'exit') return;
        this.#crashes.get(data.id)?.(String(data.message));
        this.#crashes.delete(data.id);
      };
      return p;
    });
  }

  async spawn(): Promise<SandboxProcess> {
    const host = await this.#port;
    const id = this.#nextId++;
    const channel = new MessageChannel();
    const crashed = new Promise<string>((resolve) => this.#crashes.set(id, resolve));
    const message: ToSandboxHost = {
      type: 'spawn',
      id,
      name: `hearth-sandbox-${id}`,
      source: bootScript,
      port: channel.port2,
    };
    host.postMessage(message, [channel.port2]);
    return {
      port: channel.port1,
      crashed,
      terminate: () => {
        this.#crashes.delete(id);
        channel.port1.close();
        host.postMessage({ type: 'terminate', id } satisfies ToSandboxHost);
      },
    };
  }
}
