/**
 * Tests that need a system tool (chromium, prometheus) skip without it on a developer's machine; CI sets
 * REQUIRE_TEST_TOOLS=1 (.ci/run installs them), where a missing tool fails the run instead of skipping silently.
 */
export function toolPresent(name: string, present: boolean): boolean {
  if (!present && process.env.REQUIRE_TEST_TOOLS === '1') {
    throw new Error(
      `${name} is not installed, and REQUIRE_TEST_TOOLS=1: install it (see .ci/run) or unset the variable`,
    );
  }
  return present;
}
