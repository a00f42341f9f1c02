export { type MariadbOptions, type RunningMariadb, startMariadb } from "./mariadb.js";
export { type RunningPostgres, type RunningServer, startPostgres } from "./postgres.js";
export { freePort, postgresBinDir, processTree, runAs, running, signalTree, startProcess, stopProcess, waitFor, which } from "./process.js";
export {
  type ChatCompletionReply,
  type ChatCompletionRequest,
  type Embedder,
  type EmbeddingsRequest,
  type OpenAICompatibleServer,
  type Responder,
  readBody,
  startOpenAICompatibleServer,
} from "./openai.js";
export { type RunningCluster, type RunningRedis, startRedis, startRedisCluster, startRedisSentinel } from "./redis.js";
export { jongodbBinary, startJongodb } from "./jongodb.js";
export { type SmallDisk, mountSmallDisk, onSmallDisk } from "./small-disk.js";
export { filesHolding, timesHolding } from "./raw-scan.js";
export { type EnvServers, type ServerUrls, envServers, serversFromEnv } from "./env-servers.js";
export { launchChromium } from "./chromium.js";
