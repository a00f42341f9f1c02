/** `n` and a noun, in the singular for one: "1 session", "3 sessions". */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
