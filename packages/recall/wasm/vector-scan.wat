;; The exact scan of recall's vectors: a dot product of the query with every row.
;; Rows are 32-bit floats, `stride` floats each (a multiple of 16, zero-padded), laid
;; out one after another; four 128-bit lanes of four floats are summed apart and
;; added at the end of each row. Compiled into src/vector-scan-wasm.ts by
;; `pnpm --filter @memoria/core build:wasm` (wabt); a test checks the two agree.
(module
  (import "env" "memory" (memory 1))
  ;; out[i] = query · rows[i] for i < n; every pointer a byte offset.
  (func (export "dots") (param $query i32) (param $rows i32) (param $n i32) (param $stride i32) (param $out i32)
    (local $row i32) (local $end i32) (local $at i32) (local $q i32) (local $bytes i32)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128)
    (local.set $bytes (i32.shl (local.get $stride) (i32.const 2)))
    (local.set $row (local.get $rows))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $s0 (v128.const i32x4 0 0 0 0))
        (local.set $s1 (v128.const i32x4 0 0 0 0))
        (local.set $s2 (v128.const i32x4 0 0 0 0))
        (local.set $s3 (v128.const i32x4 0 0 0 0))
        (local.set $at (local.get $row))
        (local.set $q (local.get $query))
        (block $row-done
          (loop $lanes
            (br_if $row-done (i32.ge_u (local.get $at) (i32.add (local.get $row) (local.get $bytes))))
            (local.set $s0 (f32x4.add (local.get $s0) (f32x4.mul (v128.load (local.get $at)) (v128.load (local.get $q)))))
            (local.set $s1 (f32x4.add (local.get $s1) (f32x4.mul (v128.load offset=16 (local.get $at)) (v128.load offset=16 (local.get $q)))))
            (local.set $s2 (f32x4.add (local.get $s2) (f32x4.mul (v128.load offset=32 (local.get $at)) (v128.load offset=32 (local.get $q)))))
            (local.set $s3 (f32x4.add (local.get $s3) (f32x4.mul (v128.load offset=48 (local.get $at)) (v128.load offset=48 (local.get $q)))))
            (local.set $at (i32.add (local.get $at) (i32.const 64)))
            (local.set $q (i32.add (local.get $q) (i32.const 64)))
            (br $lanes)))
        (local.set $s0 (f32x4.add (f32x4.add (local.get $s0) (local.get $s1)) (f32x4.add (local.get $s2) (local.get $s3))))
        (f32.store (local.get $out)
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $s0)) (f32x4.extract_lane 1 (local.get $s0)))
            (f32.add (f32x4.extract_lane 2 (local.get $s0)) (f32x4.extract_lane 3 (local.get $s0)))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $rows)))))
