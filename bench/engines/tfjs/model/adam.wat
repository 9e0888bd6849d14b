;; One fused Adam update over a parameter tensor, reading p, m, v, g from the tfjs-wasm heap and writing new
;; tensors p', m', v' (never in place: tfjs-wasm caches packed matmul weights by tensor id).
;; The arithmetic follows the tfjs-ops version in adam.ts operation for operation, in float32:
;;   gs = g*scale; m' = m*b1 + gs*c1; v' = v*b2 + gs*gs*c2; p' = p - (m'*lrc) / (sqrt(v'/bc2) + eps)
;; with c1 = 1-b1, c2 = 1-b2, lrc = lr/bc1.
(module
  (import "env" "memory" (memory 1))
  (func (export "adam") (param $p i32) (param $m i32) (param $v i32) (param $g i32)
        (param $po i32) (param $mo i32) (param $vo i32) (param $n i32)
        (param $scale f32) (param $b1 f32) (param $c1 f32) (param $b2 f32) (param $c2 f32)
        (param $lrc f32) (param $bc2 f32) (param $eps f32)
    (local $i i32) (local $end i32) (local $gs v128) (local $mn v128) (local $vn v128)
    (local $sgs f32) (local $smn f32) (local $svn f32)
    (local.set $end (i32.shl (local.get $n) (i32.const 2)))
    ;; four floats at a time
    (block $done (loop $next
      (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $end)))
      (local.set $gs (f32x4.mul (v128.load (i32.add (local.get $g) (local.get $i))) (f32x4.splat (local.get $scale))))
      (local.set $mn (f32x4.add
        (f32x4.mul (v128.load (i32.add (local.get $m) (local.get $i))) (f32x4.splat (local.get $b1)))
        (f32x4.mul (local.get $gs) (f32x4.splat (local.get $c1)))))
      (local.set $vn (f32x4.add
        (f32x4.mul (v128.load (i32.add (local.get $v) (local.get $i))) (f32x4.splat (local.get $b2)))
        (f32x4.mul (f32x4.mul (local.get $gs) (local.get $gs)) (f32x4.splat (local.get $c2)))))
      (v128.store (i32.add (local.get $mo) (local.get $i)) (local.get $mn))
      (v128.store (i32.add (local.get $vo) (local.get $i)) (local.get $vn))
      (v128.store (i32.add (local.get $po) (local.get $i))
        (f32x4.sub (v128.load (i32.add (local.get $p) (local.get $i)))
          (f32x4.div (f32x4.mul (local.get $mn) (f32x4.splat (local.get $lrc)))
            (f32x4.add (f32x4.sqrt (f32x4.div (local.get $vn) (f32x4.splat (local.get $bc2)))) (f32x4.splat (local.get $eps))))))
      (local.set $i (i32.add (local.get $i) (i32.const 16)))
      (br $next)))
    ;; the remaining 0-3 floats
    (block $done1 (loop $next1
      (br_if $done1 (i32.ge_u (local.get $i) (local.get $end)))
      (local.set $sgs (f32.mul (f32.load (i32.add (local.get $g) (local.get $i))) (local.get $scale)))
      (local.set $smn (f32.add (f32.mul (f32.load (i32.add (local.get $m) (local.get $i))) (local.get $b1))
        (f32.mul (local.get $sgs) (local.get $c1))))
      (local.set $svn (f32.add (f32.mul (f32.load (i32.add (local.get $v) (local.get $i))) (local.get $b2))
        (f32.mul (f32.mul (local.get $sgs) (local.get $sgs)) (local.get $c2))))
      (f32.store (i32.add (local.get $mo) (local.get $i)) (local.get $smn))
      (f32.store (i32.add (local.get $vo) (local.get $i)) (local.get $svn))
      (f32.store (i32.add (local.get $po) (local.get $i))
        (f32.sub (f32.load (i32.add (local.get $p) (local.get $i)))
          (f32.div (f32.mul (local.get $smn) (local.get $lrc))
            (f32.add (f32.sqrt (f32.div (local.get $svn) (local.get $bc2))) (local.get $eps)))))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br $next1)))
  )
)
