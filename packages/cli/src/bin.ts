#!/usr/bin/env node
import { createRequire } from "node:module";
import { describeFailure } from "./cli-error.js";
import { memoriaProgram } from "./program.js";

const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

memoriaProgram(version)
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    const { line, code } = describeFailure(error);
    if (line) process.stderr.write(`${line}\n`);
    process.exitCode = code;
  });
