// Lint gate (`npm run lint`, run by .ci/run). Type-aware over the shipped code (packages, functions, infra, scripts)
// so floating promises are caught; tests and benchmarks get the same rules except that `any` is allowed there.
import tseslint from 'typescript-eslint';

const unusedVars = [
  'error',
  {
    args: 'after-used',
    argsIgnorePattern: '^_',
    varsIgnorePattern: '^_',
    caughtErrors: 'none',
    ignoreRestSiblings: true,
  },
];

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '.sst/**', 'packages/client/src/**/*.generated.ts', '**/*.js', '**/*.mjs'],
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { '@typescript-eslint': tseslint.plugin },
    languageOptions: { parser: tseslint.parser },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      'no-unused-vars': 'off',
      '@typescript-eslint/no-unused-vars': unusedVars,
    },
  },
  {
    files: ['packages/**/*.ts', 'packages/**/*.tsx', 'functions/**/*.ts', 'scripts/**/*.ts'],
    ignores: ['**/*.test.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    files: ['infra/**/*.ts', 'sst.config.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.infra.json', tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
