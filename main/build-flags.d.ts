/**
 * Set by scripts/bundle.mjs with esbuild's `define`: true only in the test runner it builds for the lifecycle tests
 * (dist/test/helpers/test-runner.js), false in every bundle that ships. Code behind `if (WORKBENCH_TEST_HOOKS)` is
 * dropped from the shipped bundles (test/integration/production-bundles.test.ts checks).
 */
declare const WORKBENCH_TEST_HOOKS: boolean;
