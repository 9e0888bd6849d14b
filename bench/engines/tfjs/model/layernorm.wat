;; LayerNorm over rows of x [n, d] (d a multiple of 4), forward and backward, on tensors in the tfjs-wasm heap.
;; Forward:  mean, var = mean((x-mean)^2), rstd = 1/sqrt(var + eps), xhat = (x-mean)*rstd, y = xhat*g + b.
;; Backward: dxhat = dy*g; dx = rstd*(dxhat - mean(dxhat) - xhat*mean(dxhat*xhat)); dg += dy*xhat; db += dy
;; (dg and db are accumulated over rows, so the caller zeroes them first).
(module
  (import "env" "memory" (memory 1))

  (func $hsum (param $v v128) (result f32)
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $v)) (f32x4.extract_lane 1 (local.get $v)))
      (f32.add (f32x4.extract_lane 2 (local.get $v)) (f32x4.extract_lane 3 (local.get $v)))))

  (func (export "forward") (param $x i32) (param $g i32) (param $b i32) (param $y i32) (param $xhat i32)
        (param $rstd i32) (param $n i32) (param $d i32) (param $eps f32)
    (local $r i32) (local $c i32) (local $row i32) (local $db i32) (local $acc v128) (local $mean v128)
    (local $rs v128) (local $xc v128) (local $s f32)
    (local.set $db (i32.shl (local.get $d) (i32.const 2)))
    (block $done_r (loop $loop_r
      (br_if $done_r (i32.ge_u (local.get $r) (local.get $n)))
      (local.set $row (i32.mul (local.get $r) (local.get $db)))
      ;; mean
      (local.set $acc (v128.const i32x4 0 0 0 0))
      (local.set $c (i32.const 0))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $c) (local.get $db)))
        (local.set $acc (f32x4.add (local.get $acc) (v128.load (i32.add (local.get $x) (i32.add (local.get $row) (local.get $c))))))
        (local.set $c (i32.add (local.get $c) (i32.const 16)))
        (br $l1)))
      (local.set $s (f32.div (call $hsum (local.get $acc)) (f32.convert_i32_u (local.get $d))))
      (local.set $mean (f32x4.splat (local.get $s)))
      ;; variance
      (local.set $acc (v128.const i32x4 0 0 0 0))
      (local.set $c (i32.const 0))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $c) (local.get $db)))
        (local.set $xc (f32x4.sub (v128.load (i32.add (local.get $x) (i32.add (local.get $row) (local.get $c)))) (local.get $mean)))
        (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul (local.get $xc) (local.get $xc))))
        (local.set $c (i32.add (local.get $c) (i32.const 16)))
        (br $l2)))
      (local.set $s (f32.div (f32.const 1) (f32.sqrt (f32.add
        (f32.div (call $hsum (local.get $acc)) (f32.convert_i32_u (local.get $d))) (local.get $eps)))))
      (f32.store (i32.add (local.get $rstd) (i32.shl (local.get $r) (i32.const 2))) (local.get $s))
      (local.set $rs (f32x4.splat (local.get $s)))
      ;; xhat and y
      (local.set $c (i32.const 0))
      (block $d3 (loop $l3
        (br_if $d3 (i32.ge_u (local.get $c) (local.get $db)))
        (local.set $xc (f32x4.mul (f32x4.sub (v128.load (i32.add (local.get $x) (i32.add (local.get $row) (local.get $c))))
          (local.get $mean)) (local.get $rs)))
        (v128.store (i32.add (local.get $xhat) (i32.add (local.get $row) (local.get $c))) (local.get $xc))
        (v128.store (i32.add (local.get $y) (i32.add (local.get $row) (local.get $c)))
          (f32x4.add (f32x4.mul (local.get $xc) (v128.load (i32.add (local.get $g) (local.get $c))))
            (v128.load (i32.add (local.get $b) (local.get $c)))))
        (local.set $c (i32.add (local.get $c) (i32.const 16)))
        (br $l3)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $loop_r)))
  )

  (func (export "backward") (param $dy i32) (param $xhat i32) (param $rstd i32) (param $g i32)
        (param $dx i32) (param $dg i32) (param $dbias i32) (param $n i32) (param $d i32)
    (local $r i32) (local $c i32) (local $row i32) (local $db i32) (local $a1 v128) (local $a2 v128)
    (local $gy v128) (local $xh v128) (local $dxh v128) (local $m1 v128) (local $m2 v128) (local $rs v128)
    (local $inv f32)
    (local.set $db (i32.shl (local.get $d) (i32.const 2)))
    (local.set $inv (f32.div (f32.const 1) (f32.convert_i32_u (local.get $d))))
    (block $done_r (loop $loop_r
      (br_if $done_r (i32.ge_u (local.get $r) (local.get $n)))
      (local.set $row (i32.mul (local.get $r) (local.get $db)))
      ;; row sums of dxhat and dxhat*xhat; column sums of dy*xhat and dy
      (local.set $a1 (v128.const i32x4 0 0 0 0))
      (local.set $a2 (v128.const i32x4 0 0 0 0))
      (local.set $c (i32.const 0))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $c) (local.get $db)))
        (local.set $gy (v128.load (i32.add (local.get $dy) (i32.add (local.get $row) (local.get $c)))))
        (local.set $xh (v128.load (i32.add (local.get $xhat) (i32.add (local.get $row) (local.get $c)))))
        (local.set $dxh (f32x4.mul (local.get $gy) (v128.load (i32.add (local.get $g) (local.get $c)))))
        (local.set $a1 (f32x4.add (local.get $a1) (local.get $dxh)))
        (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (local.get $dxh) (local.get $xh))))
        (v128.store (i32.add (local.get $dg) (local.get $c))
          (f32x4.add (v128.load (i32.add (local.get $dg) (local.get $c))) (f32x4.mul (local.get $gy) (local.get $xh))))
        (v128.store (i32.add (local.get $dbias) (local.get $c))
          (f32x4.add (v128.load (i32.add (local.get $dbias) (local.get $c))) (local.get $gy)))
        (local.set $c (i32.add (local.get $c) (i32.const 16)))
        (br $l1)))
      (local.set $m1 (f32x4.splat (f32.mul (call $hsum (local.get $a1)) (local.get $inv))))
      (local.set $m2 (f32x4.splat (f32.mul (call $hsum (local.get $a2)) (local.get $inv))))
      (local.set $rs (f32x4.splat (f32.load (i32.add (local.get $rstd) (i32.shl (local.get $r) (i32.const 2))))))
      (local.set $c (i32.const 0))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $c) (local.get $db)))
        (local.set $xh (v128.load (i32.add (local.get $xhat) (i32.add (local.get $row) (local.get $c)))))
        (local.set $dxh (f32x4.mul (v128.load (i32.add (local.get $dy) (i32.add (local.get $row) (local.get $c))))
          (v128.load (i32.add (local.get $g) (local.get $c)))))
        (v128.store (i32.add (local.get $dx) (i32.add (local.get $row) (local.get $c)))
          (f32x4.mul (local.get $rs) (f32x4.sub (f32x4.sub (local.get $dxh) (local.get $m1)) (f32x4.mul (local.get $xh) (local.get $m2)))))
        (local.set $c (i32.add (local.get $c) (i32.const 16)))
        (br $l2)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $loop_r)))
  )
)
