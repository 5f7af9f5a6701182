import { afterEach, describe, expect, it } from 'vitest';
import { registerUrgentWork, runUrgentWork } from './urgent-work.js';

const unregister: (() => void)[] = [];
afterEach(() => unregister.splice(0).forEach((u) => u()));

describe('urgent work', () => {
  it('runs every registered piece of work at a yield point, until unregistered', () => {
    const ran: string[] = [];
    unregister.push(registerUrgentWork(() => ran.push('a')));
    const stopB = registerUrgentWork(() => ran.push('b'));
    runUrgentWork();
    stopB();
    runUrgentWork();
    expect(ran).toEqual(['a', 'b', 'a']);
  });

  it('does not recurse when the work itself reaches a yield point, and survives a throw', () => {
    let depth = 0;
    let calls = 0;
    unregister.push(
      registerUrgentWork(() => {
        calls++;
        depth++;
        runUrgentWork(); // e.g. audio delivery that ends in an instrumented path
        depth--;
        if (calls === 1) throw new Error('boom');
      }),
    );
    expect(() => runUrgentWork()).toThrow('boom');
    runUrgentWork(); // the guard was released by the throw
    expect(calls).toBe(2);
    expect(depth).toBe(0);
  });
});
