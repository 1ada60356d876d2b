import type { FromSandboxHost, ToSandboxHost } from '$lib/domain/host-messages';
import bootScript from './boot.js?raw';

export type { FromSandboxHost, ToSandboxHost };

/** A sandbox worker as the runtime holds it: its port, a way to end it, and how it ended. */
export interface SandboxProcess {
  readonly port: MessagePort;
  terminate(): void;
  /** Resolves with a reason when the worker crashed (the host saw an uncaught error). */
  readonly crashed: Promise<string>;
}

/** `connect`: the origins an extension host's worker may reach; `name`: the worker's, for devtools. */
export interface SpawnOptions {
  connect?: string;
  name?: string;
}

/** Starts sandbox workers. */
export interface SandboxSpawner {
  spawn(options?: SpawnOptions): Promise<SandboxProcess>;
}

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

  async spawn(options: SpawnOptions = {}): Promise<SandboxProcess> {
    const host = await this.#port;
    const id = this.#nextId++;
    const channel = new MessageChannel();
    const crashed = new Promise<string>((resolve) => this.#crashes.set(id, resolve));
    const message: ToSandboxHost = {
      type: 'spawn',
      id,
      name: options.name ?? `hearth-sandbox-${id}`,
      source: bootScript,
      port: channel.port2,
      ...(options.connect !== undefined ? { connect: options.connect } : {}),
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
