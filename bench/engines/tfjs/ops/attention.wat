;; Batched small matrix products with 128-bit SIMD, for attention on tfjs-wasm (whose own batched matMul
;; falls back to a scalar loop). All matrices are row-major float32; pointers are byte offsets.
;; The kernels work in place on tensors in the tfjs-wasm heap (the memory is imported from it): no copies.
;; Multiply and add stay separate (relaxed-SIMD fused multiply-add measured no faster here, and would make
;; results depend on the CPU).
(module
  (import "env" "memory" (memory 1))

  ;; C[t] (m x n) = A[t] (m x k) @ B[t] (k x n) for t < batch; B[t] starts bstride floats after B[t-1]
  ;; (bstride > k*n reads the first k rows of a larger buffer, e.g. a key/value cache).
  ;; Each row of C is built 16 columns at a time in four accumulators, then 4 columns, then one.
  (func (export "bmm") (param $a i32) (param $b i32) (param $c i32)
        (param $batch i32) (param $m i32) (param $k i32) (param $n i32) (param $bstride i32)
    (local $t i32) (local $i i32) (local $j i32) (local $p i32)
    (local $arow i32) (local $bmat i32) (local $crow i32) (local $bp i32) (local $nb i32)
    (local $av v128) (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128) (local $s f32)
    (local.set $nb (i32.shl (local.get $n) (i32.const 2)))
    (local.set $t (i32.const 0))
    (block $done_t (loop $loop_t
      (br_if $done_t (i32.ge_u (local.get $t) (local.get $batch)))
      (local.set $bmat (i32.add (local.get $b) (i32.shl (i32.mul (local.get $t) (local.get $bstride)) (i32.const 2))))
      (local.set $i (i32.const 0))
      (block $done_i (loop $loop_i
        (br_if $done_i (i32.ge_u (local.get $i) (local.get $m)))
        (local.set $arow (i32.add (local.get $a)
          (i32.shl (i32.mul (i32.add (i32.mul (local.get $t) (local.get $m)) (local.get $i)) (local.get $k)) (i32.const 2))))
        (local.set $crow (i32.add (local.get $c)
          (i32.mul (i32.add (i32.mul (local.get $t) (local.get $m)) (local.get $i)) (local.get $nb))))
        (local.set $j (i32.const 0))
        ;; 16-column blocks
        (block $done_16 (loop $loop_16
          (br_if $done_16 (i32.gt_u (i32.add (local.get $j) (i32.const 16)) (local.get $n)))
          (local.set $c0 (v128.const i32x4 0 0 0 0))
          (local.set $c1 (v128.const i32x4 0 0 0 0))
          (local.set $c2 (v128.const i32x4 0 0 0 0))
          (local.set $c3 (v128.const i32x4 0 0 0 0))
          (local.set $bp (i32.add (local.get $bmat) (i32.shl (local.get $j) (i32.const 2))))
          (local.set $p (i32.const 0))
          (block $done_p (loop $loop_p
            (br_if $done_p (i32.ge_u (local.get $p) (local.get $k)))
            (local.set $av (f32x4.splat (f32.load (i32.add (local.get $arow) (i32.shl (local.get $p) (i32.const 2))))))
            (local.set $c0 (f32x4.add (local.get $c0) (f32x4.mul (local.get $av) (v128.load offset=0 (local.get $bp)))))
            (local.set $c1 (f32x4.add (local.get $c1) (f32x4.mul (local.get $av) (v128.load offset=16 (local.get $bp)))))
            (local.set $c2 (f32x4.add (local.get $c2) (f32x4.mul (local.get $av) (v128.load offset=32 (local.get $bp)))))
            (local.set $c3 (f32x4.add (local.get $c3) (f32x4.mul (local.get $av) (v128.load offset=48 (local.get $bp)))))
            (local.set $bp (i32.add (local.get $bp) (local.get $nb)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $loop_p)))
          (v128.store offset=0 (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (local.get $c0))
          (v128.store offset=16 (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (local.get $c1))
          (v128.store offset=32 (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (local.get $c2))
          (v128.store offset=48 (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (local.get $c3))
          (local.set $j (i32.add (local.get $j) (i32.const 16)))
          (br $loop_16)))
        ;; 4-column blocks
        (block $done_4 (loop $loop_4
          (br_if $done_4 (i32.gt_u (i32.add (local.get $j) (i32.const 4)) (local.get $n)))
          (local.set $c0 (v128.const i32x4 0 0 0 0))
          (local.set $bp (i32.add (local.get $bmat) (i32.shl (local.get $j) (i32.const 2))))
          (local.set $p (i32.const 0))
          (block $done_p4 (loop $loop_p4
            (br_if $done_p4 (i32.ge_u (local.get $p) (local.get $k)))
            (local.set $av (f32x4.splat (f32.load (i32.add (local.get $arow) (i32.shl (local.get $p) (i32.const 2))))))
            (local.set $c0 (f32x4.add (local.get $c0) (f32x4.mul (local.get $av) (v128.load (local.get $bp)))))
            (local.set $bp (i32.add (local.get $bp) (local.get $nb)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $loop_p4)))
          (v128.store (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (local.get $c0))
          (local.set $j (i32.add (local.get $j) (i32.const 4)))
          (br $loop_4)))
        ;; remaining columns one at a time
        (block $done_1 (loop $loop_1
          (br_if $done_1 (i32.ge_u (local.get $j) (local.get $n)))
          (local.set $s (f32.const 0))
          (local.set $bp (i32.add (local.get $bmat) (i32.shl (local.get $j) (i32.const 2))))
          (local.set $p (i32.const 0))
          (block $done_p1 (loop $loop_p1
            (br_if $done_p1 (i32.ge_u (local.get $p) (local.get $k)))
            (local.set $s (f32.add (local.get $s) (f32.mul
              (f32.load (i32.add (local.get $arow) (i32.shl (local.get $p) (i32.const 2))))
              (f32.load (local.get $bp)))))
            (local.set $bp (i32.add (local.get $bp) (local.get $nb)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $loop_p1)))
          (f32.store (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (local.get $s))
          (local.set $j (i32.add (local.get $j) (i32.const 1)))
          (br $loop_1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $loop_i)))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $loop_t)))
  )

  ;; C[t] (m x n) = A[t] (m x k) @ B[t]^T with B[t] stored (n x k), bstride floats apart: dot products
  ;; of rows. Four rows of B at a time share each load of A; k must be a multiple of 4 (head widths are).
  (func (export "bmmNT") (param $a i32) (param $b i32) (param $c i32)
        (param $batch i32) (param $m i32) (param $k i32) (param $n i32) (param $bstride i32)
    (local $t i32) (local $i i32) (local $j i32) (local $p i32) (local $kb i32)
    (local $arow i32) (local $brow i32) (local $bmat i32) (local $crow i32)
    (local $av v128) (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128)
    (local.set $kb (i32.shl (local.get $k) (i32.const 2)))
    (local.set $t (i32.const 0))
    (block $done_t (loop $loop_t
      (br_if $done_t (i32.ge_u (local.get $t) (local.get $batch)))
      (local.set $bmat (i32.add (local.get $b) (i32.shl (i32.mul (local.get $t) (local.get $bstride)) (i32.const 2))))
      (local.set $i (i32.const 0))
      (block $done_i (loop $loop_i
        (br_if $done_i (i32.ge_u (local.get $i) (local.get $m)))
        (local.set $arow (i32.add (local.get $a)
          (i32.mul (i32.add (i32.mul (local.get $t) (local.get $m)) (local.get $i)) (local.get $kb))))
        (local.set $crow (i32.add (local.get $c)
          (i32.shl (i32.mul (i32.add (i32.mul (local.get $t) (local.get $m)) (local.get $i)) (local.get $n)) (i32.const 2))))
        (local.set $j (i32.const 0))
        (block $done_4 (loop $loop_4
          (br_if $done_4 (i32.gt_u (i32.add (local.get $j) (i32.const 4)) (local.get $n)))
          (local.set $brow (i32.add (local.get $bmat) (i32.mul (local.get $j) (local.get $kb))))
          (local.set $c0 (v128.const i32x4 0 0 0 0))
          (local.set $c1 (v128.const i32x4 0 0 0 0))
          (local.set $c2 (v128.const i32x4 0 0 0 0))
          (local.set $c3 (v128.const i32x4 0 0 0 0))
          (local.set $p (i32.const 0))
          (block $done_p (loop $loop_p
            (br_if $done_p (i32.ge_u (local.get $p) (local.get $kb)))
            (local.set $av (v128.load (i32.add (local.get $arow) (local.get $p))))
            (local.set $c0 (f32x4.add (local.get $c0) (f32x4.mul (local.get $av) (v128.load (i32.add (local.get $brow) (local.get $p))))))
            (local.set $c1 (f32x4.add (local.get $c1) (f32x4.mul (local.get $av) (v128.load (i32.add (i32.add (local.get $brow) (local.get $kb)) (local.get $p))))))
            (local.set $c2 (f32x4.add (local.get $c2) (f32x4.mul (local.get $av) (v128.load (i32.add (i32.add (local.get $brow) (i32.shl (local.get $kb) (i32.const 1))) (local.get $p))))))
            (local.set $c3 (f32x4.add (local.get $c3) (f32x4.mul (local.get $av) (v128.load (i32.add (i32.add (local.get $brow) (i32.mul (local.get $kb) (i32.const 3))) (local.get $p))))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (br $loop_p)))
          ;; transpose-free horizontal sums: c_q's four lanes add up to C[i, j+q]
          (f32.store offset=0 (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (call $hsum (local.get $c0)))
          (f32.store offset=4 (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (call $hsum (local.get $c1)))
          (f32.store offset=8 (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (call $hsum (local.get $c2)))
          (f32.store offset=12 (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (call $hsum (local.get $c3)))
          (local.set $j (i32.add (local.get $j) (i32.const 4)))
          (br $loop_4)))
        (block $done_1 (loop $loop_1
          (br_if $done_1 (i32.ge_u (local.get $j) (local.get $n)))
          (local.set $brow (i32.add (local.get $bmat) (i32.mul (local.get $j) (local.get $kb))))
          (local.set $c0 (v128.const i32x4 0 0 0 0))
          (local.set $p (i32.const 0))
          (block $done_p1 (loop $loop_p1
            (br_if $done_p1 (i32.ge_u (local.get $p) (local.get $kb)))
            (local.set $c0 (f32x4.add (local.get $c0) (f32x4.mul (v128.load (i32.add (local.get $arow) (local.get $p))) (v128.load (i32.add (local.get $brow) (local.get $p))))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (br $loop_p1)))
          (f32.store (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))) (call $hsum (local.get $c0)))
          (local.set $j (i32.add (local.get $j) (i32.const 1)))
          (br $loop_1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $loop_i)))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $loop_t)))
  )

;; Copy between the row layout of a projection, rows [b*t, width] (head h at columns offset + h*hd), and the
  ;; head layout [b*h, cap, hd] (sequence positions pos..pos+t-1 of a buffer holding cap positions).
  ;; toHeads = 1 splits rows into heads; 0 merges heads back into rows. hd must be a multiple of 4.
  (func (export "heads") (param $rows i32) (param $heads i32) (param $b i32) (param $t i32) (param $h i32)
        (param $hd i32) (param $width i32) (param $offset i32) (param $cap i32) (param $pos i32) (param $toHeads i32)
    (local $bi i32) (local $hi i32) (local $ti i32) (local $c i32) (local $r i32) (local $q i32)
    (local.set $bi (i32.const 0))
    (block $done_b (loop $loop_b
      (br_if $done_b (i32.ge_u (local.get $bi) (local.get $b)))
      (local.set $hi (i32.const 0))
      (block $done_h (loop $loop_h
        (br_if $done_h (i32.ge_u (local.get $hi) (local.get $h)))
        (local.set $ti (i32.const 0))
        (block $done_t (loop $loop_t
          (br_if $done_t (i32.ge_u (local.get $ti) (local.get $t)))
          ;; r: byte address of the row segment; q: byte address of the head vector
          (local.set $r (i32.add (local.get $rows) (i32.shl (i32.add
            (i32.mul (i32.add (i32.mul (local.get $bi) (local.get $t)) (local.get $ti)) (local.get $width))
            (i32.add (local.get $offset) (i32.mul (local.get $hi) (local.get $hd)))) (i32.const 2))))
          (local.set $q (i32.add (local.get $heads) (i32.shl (i32.mul
            (i32.add (i32.mul (i32.add (i32.mul (local.get $bi) (local.get $h)) (local.get $hi)) (local.get $cap))
              (i32.add (local.get $pos) (local.get $ti)))
            (local.get $hd)) (i32.const 2))))
          (local.set $c (i32.const 0))
          (block $done_c (loop $loop_c
            (br_if $done_c (i32.ge_u (local.get $c) (i32.shl (local.get $hd) (i32.const 2))))
            (if (local.get $toHeads)
              (then (v128.store (i32.add (local.get $q) (local.get $c)) (v128.load (i32.add (local.get $r) (local.get $c)))))
              (else (v128.store (i32.add (local.get $r) (local.get $c)) (v128.load (i32.add (local.get $q) (local.get $c))))))
            (local.set $c (i32.add (local.get $c) (i32.const 16)))
            (br $loop_c)))
          (local.set $ti (i32.add (local.get $ti) (i32.const 1)))
          (br $loop_t)))
        (local.set $hi (i32.add (local.get $hi) (i32.const 1)))
        (br $loop_h)))
      (local.set $bi (i32.add (local.get $bi) (i32.const 1)))
      (br $loop_b)))
  )

;; dst[t] (cols x rows) = src[t] (rows x cols)ᵀ for t < batch, in 4x4 blocks transposed in registers.
  ;; rows and cols must be multiples of 4.
  (func (export "transpose") (param $src i32) (param $dst i32) (param $batch i32) (param $rows i32) (param $cols i32)
    (local $t i32) (local $i i32) (local $j i32) (local $s i32) (local $d i32) (local $rb i32) (local $cb i32)
    (local $r0 v128) (local $r1 v128) (local $r2 v128) (local $r3 v128)
    (local $t0 v128) (local $t1 v128) (local $t2 v128) (local $t3 v128)
    (local.set $cb (i32.shl (local.get $cols) (i32.const 2)))
    (local.set $rb (i32.shl (local.get $rows) (i32.const 2)))
    (block $done_t (loop $loop_t
      (br_if $done_t (i32.ge_u (local.get $t) (local.get $batch)))
      (local.set $i (i32.const 0))
      (block $done_i (loop $loop_i
        (br_if $done_i (i32.ge_u (local.get $i) (local.get $rows)))
        (local.set $j (i32.const 0))
        (block $done_j (loop $loop_j
          (br_if $done_j (i32.ge_u (local.get $j) (local.get $cols)))
          ;; s: src[t, i, j]; d: dst[t, j, i]
          (local.set $s (i32.add (local.get $src) (i32.shl (i32.add
            (i32.mul (i32.add (i32.mul (local.get $t) (local.get $rows)) (local.get $i)) (local.get $cols)) (local.get $j))
            (i32.const 2))))
          (local.set $d (i32.add (local.get $dst) (i32.shl (i32.add
            (i32.mul (i32.add (i32.mul (local.get $t) (local.get $cols)) (local.get $j)) (local.get $rows)) (local.get $i))
            (i32.const 2))))
          (local.set $r0 (v128.load (local.get $s)))
          (local.set $r1 (v128.load (i32.add (local.get $s) (local.get $cb))))
          (local.set $r2 (v128.load (i32.add (local.get $s) (i32.shl (local.get $cb) (i32.const 1)))))
          (local.set $r3 (v128.load (i32.add (local.get $s) (i32.mul (local.get $cb) (i32.const 3)))))
          ;; interleave pairs of rows, then pairs of pairs: the classic 4x4 transpose in eight shuffles
          (local.set $t0 (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $r0) (local.get $r1)))
          (local.set $t1 (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $r0) (local.get $r1)))
          (local.set $t2 (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $r2) (local.get $r3)))
          (local.set $t3 (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $r2) (local.get $r3)))
          (v128.store (local.get $d)
            (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $t0) (local.get $t2)))
          (v128.store (i32.add (local.get $d) (local.get $rb))
            (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $t0) (local.get $t2)))
          (v128.store (i32.add (local.get $d) (i32.shl (local.get $rb) (i32.const 1)))
            (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $t1) (local.get $t3)))
          (v128.store (i32.add (local.get $d) (i32.mul (local.get $rb) (i32.const 3)))
            (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $t1) (local.get $t3)))
          (local.set $j (i32.add (local.get $j) (i32.const 4)))
          (br $loop_j)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $loop_i)))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $loop_t)))
  )

  (func $hsum (param $v v128) (result f32)
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $v)) (f32x4.extract_lane 1 (local.get $v)))
      (f32.add (f32x4.extract_lane 2 (local.get $v)) (f32x4.extract_lane 3 (local.get $v)))))
)
