// Words: the terms a message is indexed by and a question asks for, and their ranking.
export { TOPIC_WEIGHT, contentWords, recallQuery, recallTerms, stem } from "./lexical-terms.js";
export { BM25_B, BM25_K1, type QueryGroup, TermIndex, queryGroups, termCounts } from "./lexical-ranking.js";
// Vectors: embeddings that need no model, and the exact scan.
export { HashingEmbeddings } from "./hashing-embeddings.js";
export { dotProduct, unitVector } from "./vectors.js";
export { VectorSlab } from "./vector-slab.js";
// Ranked lists: the best k, and lists fused by rank.
export { bestPositions, sortedFew, topK } from "./top-k.js";
export { type RankedList, fuseRankings } from "./rank-fusion.js";
export { liftByNeighbours } from "./neighbour-lift.js";
export { type TrustProbe, TRUST_PROBES, embeddingTrust } from "./embedding-trust.js";
// Indexes: items held in the process, the exact index, any LangChain VectorStore, and the checks every index makes.
export { type HeldRecallItem, HeldRecallItems } from "./held-recall-items.js";
export { type RecallPlace, tieOrder } from "./recall-place.js";
export { exactIndex } from "./exact-index.js";
export { type VectorStoreIndexOptions, type VectorStoreLike, itemId, vectorStoreIndex } from "./vector-store-index.js";
export { checkRecallK, checkRecallSelector } from "./index-checks.js";
