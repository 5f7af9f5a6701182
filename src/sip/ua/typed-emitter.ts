// A thin typed facade over node:events.

import { EventEmitter } from 'node:events';

export class TypedEmitter<Events extends object> {
  private readonly emitter = new EventEmitter();

  on<K extends keyof Events & string>(event: K, listener: (e: Events[K]) => void): this {
    this.emitter.on(event, listener);
    return this;
  }

  once<K extends keyof Events & string>(event: K, listener: (e: Events[K]) => void): this {
    this.emitter.once(event, listener);
    return this;
  }

  off<K extends keyof Events & string>(event: K, listener: (e: Events[K]) => void): this {
    this.emitter.off(event, listener);
    return this;
  }

  protected emit<K extends keyof Events & string>(event: K, e: Events[K]): void {
    this.emitter.emit(event, e);
  }
}
