// ESLint flat config: typescript-eslint with type information, so that
// floating promises (a dropped SIP send, an unawaited DB write) are errors.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'sip-test/logs/**', 'eslint.config.js'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false } },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  // Layers (DESIGN "Shape"): the calls domain depends on the ports it declares
  // and the model, never on a store, a SIP engine or the HTTP layer; only
  // src/store opens database transactions (everyone else has a unit of work).
  {
    files: ['src/calls/**/*.ts'],
    ignores: ['**/*.test.ts', '**/test-support/**', '**/*-test-kit.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/store/**',
                '**/sip/**',
                '**/api/**',
                '**/config/**',
                '**/agent/**',
                '**/agent-bridge/**',
                '**/media/**',
              ],
              message: 'calls/ depends on its ports (calls/ports) and src/model only.',
            },
            {
              group: ['better-sqlite3', 'pg', 'drachtio-srf', 'fastify', 'ws'],
              message:
                'calls/ never uses a database, SIP engine, HTTP or WebSocket library directly.',
            },
          ],
        },
      ],
    },
  },
  // The adapters sit below the calls domain and the HTTP layer: src/sip,
  // src/media, src/agent and src/store never import src/calls or src/api (the
  // ports they fulfil are matched structurally; store implements
  // calls/ports/call-store.ts without importing it). Tests, test-support and
  // test kits are exempt, as for calls/ above.
  {
    files: ['src/{sip,media,agent,store}/**/*.ts'],
    ignores: ['**/*.test.ts', '**/test-support/**', '**/*-test-kit.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/calls/**', '**/api/**'],
              message: 'Adapters (sip, media, agent, store) never import src/calls or src/api.',
            },
          ],
        },
      ],
    },
  },
  // src/agent-bridge implements calls/ports/agent-link.ts (and takes media legs
  // typed by calls/ports/media-port.ts), so it may import exactly calls/ports/**;
  // it also imports the Timers interface and realTimers from calls/timers.ts,
  // the one other file it is allowed. Nothing else from calls/, nothing from api/.
  {
    files: ['src/agent-bridge/**/*.ts'],
    ignores: ['**/*.test.ts', '**/test-support/**', '**/*-test-kit.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // a regex: a gitignore-style '!**/calls/ports/**' cannot re-include
              // files under a folder that '**/calls/**' already excludes
              regex: '(^|/)calls/(?!ports/|timers\\.js$)|(^|/)api/',
              message:
                'agent-bridge imports only calls/ports/** and calls/timers.js from src/calls, and never src/api.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/store/**', '**/*.test.ts', '**/test-support/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='transaction']",
          message:
            'Only src/store opens transactions; use the unit of work (store.unitOfWork.run).',
        },
      ],
    },
  },
  // plain JS (the worker's tsx boot file): no type information
  { files: ['**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'sip-test/**/*.ts', 'src/cli.ts'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
