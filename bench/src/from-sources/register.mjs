// `node --import tsx --import ./src/from-sources/register.mjs …`: memoria's packages from their sources (resolve.mjs).
import { register } from "node:module";

register(new URL("./resolve.mjs", import.meta.url));
