/** The dot product of two vectors (their cosine similarity when both are unit vectors), over the shorter one's length. */
export function dotProduct(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

/** The vector as 32-bit floats, scaled to length 1 (a zero vector stays zero), so cosine similarity is a dot product. */
export function unitVector(vector: readonly number[]): Float32Array {
  const out = Float32Array.from(vector);
  let norm = 0;
  for (let i = 0; i < out.length; i++) norm += (out[i] as number) * (out[i] as number);
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) * scale;
  }
  return out;
}
