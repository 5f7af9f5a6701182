import { describe, expect, it } from 'vitest';
import { renderPrompt } from './render-prompt.js';

describe('renderPrompt', () => {
  it('resolves dynamic variables by key, with or without spaces in the braces', () => {
    expect(renderPrompt('Hi {{name}}, {{ name }}!', { name: 'Ana' })).toBe('Hi Ana, Ana!');
  });

  it('resolves super variables by their placeholder string', () => {
    const sv = { due: { placeholder: '{{due}}', value: '2026-07-01' } };
    expect(renderPrompt('Due {{due}}.', {}, sv)).toBe('Due 2026-07-01.');
  });

  it('resolves a super variable whose placeholder is not in braces', () => {
    const sv = { amt: { placeholder: '%amount%', value: '12 EUR' } };
    expect(renderPrompt('Pay %amount% now', {}, sv)).toBe('Pay 12 EUR now');
  });

  it('lets a super variable win over a dynamic variable of the same name', () => {
    const sv = { x: { placeholder: '{{x}}', value: 'super' } };
    expect(renderPrompt('{{x}}', { x: 'dynamic' }, sv)).toBe('super');
  });

  it('leaves unknown placeholders and prototype names as they are', () => {
    expect(renderPrompt('{{missing}} {{constructor}} {{}}', { name: 'Ana' })).toBe(
      '{{missing}} {{constructor}} {{}}',
    );
  });

  it('does not expand placeholders inside substituted values', () => {
    expect(renderPrompt('{{a}}', { a: '{{b}}', b: 'no' })).toBe('{{b}}');
  });

  it('treats regex characters in a literal placeholder literally', () => {
    const sv = { p: { placeholder: '$(x)', value: 'ok' } };
    expect(renderPrompt('a $(x) b $x', {}, sv)).toBe('a ok b $x');
  });
});
