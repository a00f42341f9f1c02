// Sums the vitest JSON reports of every package into one line, "N passed, M failed",
// and fails when a package that has tests wrote no report (it crashed, or never ran).
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
const root = new URL("..", import.meta.url).pathname;
const expected = ["packages", "examples", "docs", "tests"]
  .flatMap((group) => {
    const base = join(root, group);
    if (!existsSync(base)) return [];
    if (existsSync(join(base, "package.json"))) return [base];
    return readdirSync(base).map((name) => join(base, name));
  })
  .filter((path) => existsSync(join(path, "package.json")))
  .map((path) => JSON.parse(readFileSync(join(path, "package.json"), "utf8")))
  .filter((manifest) => manifest.scripts?.test || manifest.scripts?.["test:packaging"])
  .map((manifest) => manifest.name.replace(/[^A-Za-z0-9_.-]/g, "_"));

let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
const failures = [];
for (const name of expected) {
  const file = join(dir, `${name}.json`);
  if (!existsSync(file)) {
    missing.push(name);
    continue;
  }
  const report = JSON.parse(readFileSync(file, "utf8"));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + report.numTodoTests;
  // A file that failed outside its tests (it did not load, or a hook failed and its tests were skipped) counts as a failure.
  failed += report.testResults.filter(failedOutsideTests).length;
  failures.push(...failuresOf(name, report));
}
for (const line of failures) console.error(line);
for (const name of missing) console.error(`no test report from ${name}: its tests did not run`);
failed += missing.length;
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);

function failedOutsideTests(file) {
  return file.status === "failed" && !file.assertionResults.some((test) => test.status === "failed");
}

// One line per failed test (or file that failed outside its tests), with the first line
// of its message, so the end of a CI log says what failed without the rest of the log.
function failuresOf(name, report) {
  return report.testResults.flatMap((file) => {
    const where = `${name}: ${file.name.replace(root, "")}`;
    const first = (messages) => explain((messages?.[0] ?? "").split("\n")[0]).slice(0, 300);
    if (failedOutsideTests(file))
      return [`failed: ${where}: ${first([file.message]) || "outside its tests (a hook timed out or threw; its tests were skipped: see the log)"}`];
    return file.assertionResults
      .filter((test) => test.status === "failed")
      .map((test) => `failed: ${where} > ${test.fullName}: ${first(test.failureMessages)}`);
  });
}

// vitest names a test that ran out of time inside expect.poll only by the poll's captured stack.
function explain(line) {
  return line === "Error: STACK_TRACE_ERROR" ? "the test ran out of time while an expect.poll was waiting (vitest says STACK_TRACE_ERROR)" : line;
}
