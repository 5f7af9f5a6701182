/**
 * Resolves a prompt's placeholders for `start.call.prompt`. Pure.
 *
 * - `{{name}}` (spaces inside the braces allowed) takes `dynamicVariables[name]`;
 * - a super variable replaces its own `placeholder` string (normally `{{due}}`,
 *   but any literal works) with its `value`, and wins over a dynamic variable
 *   of the same name;
 * - unknown placeholders stay as they are.
 *
 * One pass over the template: substituted values are never scanned again, so a
 * value containing `{{x}}` is not expanded.
 */
export interface PromptSuperVariable {
  placeholder: string;
  value: string;
}

const BRACED = /^\{\{\s*([^{}]*?)\s*\}\}$/;
const BRACED_SOURCE = String.raw`\{\{\s*([^{}]*?)\s*\}\}`;

export function renderPrompt(
  template: string,
  dynamicVariables: Readonly<Record<string, string>> = {},
  superVariables: Readonly<Record<string, PromptSuperVariable>> = {},
): string {
  const superByName = new Map<string, string>();
  const literals = new Map<string, string>();
  for (const sv of Object.values(superVariables)) {
    if (sv.placeholder.length === 0) continue;
    const braced = BRACED.exec(sv.placeholder);
    if (braced) superByName.set(braced[1] ?? '', sv.value);
    else literals.set(sv.placeholder, sv.value);
  }
  const literalSources = [...literals.keys()]
    .sort((a, b) => b.length - a.length)
    .map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = new RegExp([...literalSources, BRACED_SOURCE].join('|'), 'g');
  return template.replace(pattern, (match: string, name: string | undefined) => {
    if (name === undefined) return literals.get(match) ?? match;
    const fromSuper = superByName.get(name);
    if (fromSuper !== undefined) return fromSuper;
    if (Object.hasOwn(dynamicVariables, name)) return dynamicVariables[name] ?? match;
    return match;
  });
}
