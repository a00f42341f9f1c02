import { Command } from "commander";
import { browseCommands } from "./commands-browse.js";
import { dataCommands } from "./commands-data.js";
import { keyCommands } from "./commands-keys.js";
import { mcpCommand } from "./commands-mcp.js";
import { studioCommand } from "./commands-studio.js";

/** The `memoria` command. Every store is named by a URL (`--store`, or MEMORIA_STORE). */
export function memoriaProgram(version: string): Command {
  const program = new Command("memoria")
    .description("Inspect, move and erase what memoria stores: sqlite:./x.db, postgres://…, mysql://…, redis://…, mongodb://…, file:./dir")
    .version(version)
    // Commander's own errors (an unknown command or option, a missing argument) are thrown,
    // not printed with process.exit(1): bin.ts prints them as one line, exit code 2.
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .configureHelp({ sortSubcommands: false });
  browseCommands(program);
  dataCommands(program);
  keyCommands(program);
  studioCommand(program);
  mcpCommand(program, version);
  return program;
}
