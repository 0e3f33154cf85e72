import Tilesmith
open Tilesmith

/-!
One small definition per primitive and per prelude function, at concrete
shapes, for the NumPy cross-check (tests/crosscheck.py): broadcasting,
negative dims, keepdim reductions, gather in its embedding and
cross-entropy forms, iota and comparisons, select, layout operations and
`layers`.  Inputs named `p*` are drawn positive by the cross-check.
-/

-- ---- unary elementwise ----

/-- `exp`. -/
def prim_exp (x : Tensor [3, 4]) : Tensor [3, 4] := exp x
/-- `log` of a positive input. -/
def prim_log (p : Tensor [3, 4]) : Tensor [3, 4] := log p
/-- `log` of mostly negative values: NaN positions must agree. -/
def prim_log_nan (x : Tensor [3, 4]) : Tensor [3, 4] := log (x - 1)
/-- `sqrt` of a positive input. -/
def prim_sqrt (p : Tensor [3, 4]) : Tensor [3, 4] := sqrt p
/-- `rsqrt` of a positive input. -/
def prim_rsqrt (p : Tensor [3, 4]) : Tensor [3, 4] := rsqrt p
/-- `tanh`. -/
def prim_tanh (x : Tensor [3, 4]) : Tensor [3, 4] := tanh x
/-- `erf`. -/
def prim_erf (x : Tensor [3, 4]) : Tensor [3, 4] := erf x
/-- `sigmoid`, also at large magnitudes. -/
def prim_sigmoid (x : Tensor [3, 4]) : Tensor [3, 4] := sigmoid (x * 40)
/-- `relu`. -/
def prim_relu (x : Tensor [3, 4]) : Tensor [3, 4] := relu x
/-- `abs`. -/
def prim_abs (x : Tensor [3, 4]) : Tensor [3, 4] := abs x
/-- Unary minus. -/
def prim_neg (x : Tensor [3, 4]) : Tensor [3, 4] := -x
/-- `cast` of a boolean mask. -/
def prim_cast_mask (x : Tensor [3, 4]) : Tensor [3, 4] := cast (x > 0)
/-- `cast` of an Index tensor. -/
def prim_cast_index (i : Index [2, 3]) : Tensor [2, 3] := cast i

-- ---- binary elementwise, broadcasting ----

/-- `+` with a trailing-dimension broadcast. -/
def prim_add_row (x : Tensor [2, 3, 4]) (b : Tensor [4]) : Tensor [2, 3, 4] := x + b
/-- `+` of a column and a row: both operands stretch. -/
def prim_add_outer (a : Tensor [3, 1]) (b : Tensor [1, 4]) : Tensor [3, 4] := a + b
/-- `-` with a size-1 middle dimension. -/
def prim_sub_mid (x : Tensor [2, 3, 4]) (y : Tensor [2, 1, 4]) : Tensor [2, 3, 4] := x - y
/-- `*` by a Nat scalar. -/
def prim_mul_nat (x : Tensor [3, 4]) : Tensor [3, 4] := x * 3
/-- `*` by a Float scalar on the left. -/
def prim_mul_float (x : Tensor [3, 4]) : Tensor [3, 4] := 0.25 * x
/-- `/` by a compile-time `sqrt` of a Nat. -/
def prim_div_sqrt (x : Tensor [3, 4]) : Tensor [3, 4] :=
  let n : Nat := 16
  x / sqrt n
/-- A scalar divided by a tensor. -/
def prim_div_scalar (x : Tensor [3, 4]) : Tensor [3, 4] := 1 / x
/-- `/` of two tensors, broadcasting. -/
def prim_div (x : Tensor [3, 4]) (y : Tensor [3, 1]) : Tensor [3, 4] := x / y
/-- `^` by a Nat. -/
def prim_pow_nat (x : Tensor [3, 4]) : Tensor [3, 4] := x ^ 3
/-- `^` of a positive base by a tensor exponent. -/
def prim_pow (p : Tensor [3, 4]) (y : Tensor [4]) : Tensor [3, 4] := p ^ y
/-- `max` of two tensors, broadcasting. -/
def prim_max (a : Tensor [3, 4]) (b : Tensor [3, 1]) : Tensor [3, 4] := max a b
/-- `min` of a tensor and a scalar. -/
def prim_min (a : Tensor [3, 4]) : Tensor [3, 4] := min a 0.5
/-- Compile-time Nat and Float arithmetic folded into one constant. -/
def prim_const_fold (x : Tensor [3, 4]) : Tensor [3, 4] :=
  let c : Float := ((2 + 3) * 4 - 6) / (1 / sqrt 4.0)
  x * c

-- ---- comparisons and select ----

/-- `<` gives a mask. -/
def prim_lt (a : Tensor [3, 4]) (b : Tensor [4]) := a < b
/-- `≤` of iota row and column: a lower-triangular mask. -/
def prim_le := reshape (iota 4) [1, 4] ≤ reshape (iota 3) [3, 1]
/-- `>` against a scalar. -/
def prim_gt (a : Tensor [3, 4]) := a > 0
/-- `≥` of two tensors. -/
def prim_ge (a b : Tensor [3, 4]) := a ≥ b
/-- `==` of index tensors. -/
def prim_eq (i : Index [6]) := i == reshape (iota 3) [3, 1]
/-- `≠` of index tensors. -/
def prim_ne (i j : Index [2, 5]) : Tensor [2, 5] := cast (i ≠ j)
/-- `/` of integers is Lean's Int division: Euclidean (rounding down for a
positive divisor), `x / 0 = 0`. -/
def prim_idiv_nat := cast ((reshape (iota 7) [7, 1] - 3) / 2)
def prim_idiv (i j : Index [2, 5]) : Tensor [2, 5] := cast ((i - 2) / j + i / (0 - j))
/-- `select` with a mask from a comparison and two tensors. -/
def prim_select (a : Tensor [3, 4]) (b : Tensor [4]) : Tensor [3, 4] := select (a > b) a b
/-- `select` with a scalar branch: `-∞` where masked. -/
def prim_select_neginf (a : Tensor [3, 4]) : Tensor [3, 4] := select (a > 0) a neginf
/-- `inf` and `neginf` as operands. -/
def prim_inf (a : Tensor [3, 4]) : Tensor [3, 4] := min (max a neginf) inf
/-- NaN propagates through `max` (as in PyTorch). -/
def prim_nan_max (x : Tensor [3, 4]) : Tensor [3, 4] := max (log x) 0
/-- NaN propagates through `min`. -/
def prim_nan_min (x : Tensor [3, 4]) : Tensor [3, 4] := min (log x) 0
/-- NaN propagates through `relu`. -/
def prim_nan_relu (x : Tensor [3, 4]) : Tensor [3, 4] := relu (log x)
/-- NaN propagates through `amax`. -/
def prim_nan_amax (x : Tensor [3, 4]) : Tensor [3, 1] := amax (log x)
/-- NaN propagates through `amin`. -/
def prim_nan_amin (x : Tensor [3, 4]) : Tensor [1, 4] := amin (log x) (dim := 0)

-- ---- iota, size ----

/-- `iota` as the output (an integer tensor). -/
def prim_iota := iota 5
/-- `iota` used as reals (cast inserted by the Tensor binder). -/
def prim_iota_add (x : Tensor [5]) : Tensor [5] := x + cast (iota 5)
/-- `size` as a compile-time scalar; negative and positive dims. -/
def prim_size (x : Tensor [2, 3, 4]) : Tensor [2, 3, 4] :=
  x * size x (dim := 0) + size x (dim := -2) - size x

-- ---- reductions (keepdim) ----

/-- `sum` over the last dimension. -/
def prim_sum (x : Tensor [2, 3, 4]) : Tensor [2, 3, 1] := sum x
/-- `sum` over dimension 0. -/
def prim_sum_dim0 (x : Tensor [2, 3, 4]) : Tensor [1, 3, 4] := sum x (dim := 0)
/-- `amax` over dimension -2. -/
def prim_amax (x : Tensor [2, 3, 4]) : Tensor [2, 1, 4] := amax x (dim := -2)
/-- `amin` over dimension 1 given positionally. -/
def prim_amin (x : Tensor [2, 3, 4]) : Tensor [2, 1, 4] := amin x 1
/-- A reduction broadcast back: `x - amax x`. -/
def prim_sub_amax (x : Tensor [3, 5]) : Tensor [3, 5] := x - amax x

-- ---- matrix products ----

/-- `⬝` of two matrices. -/
def prim_matmul (a : Tensor [3, 4]) (b : Tensor [4, 5]) : Tensor [3, 5] := a ⬝ b
/-- `matmul` with a batch on the left only. -/
def prim_matmul_batch (a : Tensor [2, 3, 4]) (b : Tensor [4, 5]) : Tensor [2, 3, 5] := matmul a b
/-- Batch dimensions broadcast against each other. -/
def prim_matmul_bcast (a : Tensor [2, 1, 3, 4]) (b : Tensor [3, 4, 2]) : Tensor [2, 3, 3, 2] :=
  a ⬝ b
/-- `aᵀ` on a batch of matrices, used in a product. -/
def prim_transpose (a b : Tensor [2, 3, 4]) : Tensor [2, 3, 3] := a ⬝ bᵀ
/-- `transpose` alone. -/
def prim_transpose_alone (a : Tensor [2, 3, 4]) : Tensor [2, 4, 3] := transpose a

-- ---- layout ----

/-- `permute` of a rank-4 tensor. -/
def prim_permute (x : Tensor [2, 3, 4, 5]) : Tensor [4, 2, 5, 3] := permute x [2, 0, 3, 1]
/-- `reshape`, merging and splitting dimensions. -/
def prim_reshape (x : Tensor [2, 3, 4]) : Tensor [6, 2, 2] := reshape x [6, 2, 2]
/-- `slice` along the last dimension by default. -/
def prim_slice (x : Tensor [3, 6]) : Tensor [3, 3] := slice x 2 5
/-- `slice` with a named dim given first. -/
def prim_slice_dim (x : Tensor [4, 3, 2]) : Tensor [2, 3, 2] := slice x (dim := 0) 1 3
/-- `concat` along dimension 0 (the default). -/
def prim_concat (a : Tensor [2, 3]) (b : Tensor [1, 3]) : Tensor [3, 3] := concat [a, b]
/-- `concat` of three tensors along dimension -1. -/
def prim_concat_last (a : Tensor [2, 1]) (b : Tensor [2, 3]) (c : Tensor [2, 2]) : Tensor [2, 6] :=
  concat [a, b, c] (dim := -1)

-- ---- gather ----

/-- `gather` in the embedding form: rows of a table. -/
def prim_gather_embed (E : Param [7, 3]) (ids : Index [5]) : Tensor [5, 3] :=
  gather E (reshape ids [5, 1]) (dim := 0)
/-- `gather` in the cross-entropy form: one entry per row. -/
def prim_gather_pick (x : Tensor [4, 6]) (t : Index [4]) : Tensor [4, 1] :=
  gather x (reshape t [4, 1])
/-- `gather` as `take_along_axis` with an index of the same rank and size. -/
def prim_gather_full (x : Tensor [3, 5]) (i : Index [3, 4]) : Tensor [3, 4] :=
  gather x i (dim := 1)
/-- `gather` whose index broadcasts over the other dimension. -/
def prim_gather_bcast (x : Tensor [3, 5]) (i : Index [1, 2]) : Tensor [3, 2] := gather x i

-- ---- layers and stacked parameters ----

/-- `layers` folding over a stacked parameter `W[l]`. -/
def prim_layers (x : Tensor [2, 3]) (W : Param [4, 3, 3]) (b : Param [4, 3]) : Tensor [2, 3] :=
  layers 4 x (fun l h => tanh (h ⬝ W[l] + b[l]))
/-- `layers` that uses the layer number itself. -/
def prim_layers_index (x : Tensor [3]) : Tensor [3] :=
  layers 3 x (fun l h => h * 0.5 + l)

-- ---- the prelude ----

/-- `square`. -/
def pre_square (x : Tensor [3, 4]) : Tensor [3, 4] := square x
/-- `reciprocal`. -/
def pre_reciprocal (x : Tensor [3, 4]) : Tensor [3, 4] := reciprocal x
/-- `mean` over the last dimension. -/
def pre_mean (x : Tensor [2, 3, 4]) := mean x
/-- `mean` over dimension 1. -/
def pre_mean_dim (x : Tensor [2, 3, 4]) := mean x (dim := 1)
/-- `var` (population) over the last dimension. -/
def pre_var (x : Tensor [3, 5]) := var x
/-- `var` over dimension 0. -/
def pre_var_dim (x : Tensor [3, 5]) := var x (dim := 0)
/-- `logsumexp` of large logits over the last dimension. -/
def pre_logsumexp (x : Tensor [3, 5]) := logsumexp (x * 300)
/-- `logsumexp` over dimension 0. -/
def pre_logsumexp_dim (x : Tensor [3, 5]) := logsumexp x (dim := 0)
/-- `softmax` of large logits over the last dimension. -/
def pre_softmax (x : Tensor [3, 5]) : Tensor [3, 5] := softmax (x * 300)
/-- `softmax` over dimension -2. -/
def pre_softmax_dim (x : Tensor [2, 3, 4]) : Tensor [2, 3, 4] := softmax x (dim := -2)
/-- `logSoftmax`. -/
def pre_logsoftmax (x : Tensor [3, 5]) : Tensor [3, 5] := logSoftmax x
/-- `rmsnorm` with the default epsilon. -/
def pre_rmsnorm (x : Tensor [2, 3, 8]) (w : Param [8]) : Tensor [2, 3, 8] := rmsnorm x w
/-- `rmsnorm` with a given epsilon. -/
def pre_rmsnorm_eps (x : Tensor [3, 8]) (w : Param [8]) : Tensor [3, 8] := rmsnorm x w (eps := 0.5)
/-- `layernorm`. -/
def pre_layernorm (x : Tensor [3, 8]) (w b : Param [8]) : Tensor [3, 8] := layernorm x w b
/-- `silu`. -/
def pre_silu (x : Tensor [3, 4]) : Tensor [3, 4] := silu x
/-- `gelu` (exact). -/
def pre_gelu (x : Tensor [3, 4]) : Tensor [3, 4] := gelu (x * 3)
/-- `geluTanh`. -/
def pre_gelu_tanh (x : Tensor [3, 4]) : Tensor [3, 4] := geluTanh (x * 3)
/-- `softplus`, also at large magnitudes. -/
def pre_softplus (x : Tensor [3, 4]) : Tensor [3, 4] := softplus (x * 30)
/-- `softcap`. -/
def pre_softcap (x : Tensor [3, 4]) : Tensor [3, 4] := softcap (x * 100) 50
/-- `causalMask` on square scores. -/
def pre_causal_mask (x : Tensor [2, 4, 4]) : Tensor [2, 4, 4] := causalMask x
/-- `causalMask` on non-square scores. -/
def pre_causal_mask_rect (x : Tensor [3, 5]) : Tensor [3, 5] := causalMask x
/-- `linear`. -/
def pre_linear (x : Tensor [2, 3, 4]) (w : Param [4, 5]) := linear x w
/-- `linearBias`. -/
def pre_linear_bias (x : Tensor [3, 4]) (w : Param [4, 5]) (b : Param [5]) := linearBias x w b
/-- `swiglu`. -/
def pre_swiglu (x : Tensor [3, 4]) (wg wu : Param [4, 6]) := swiglu x wg wu
/-- `embed`. -/
def pre_embed (E : Param [9, 4]) (ids : Index [6]) : Tensor [6, 4] := embed E ids
/-- `splitHeads`. -/
def pre_split_heads (x : Tensor [2, 3, 8]) : Tensor [2, 4, 3, 2] := splitHeads 2 3 4 2 x
/-- `mergeHeads` after `splitHeads` is the identity. -/
def pre_merge_heads (x : Tensor [2, 3, 8]) : Tensor [2, 3, 8] :=
  mergeHeads 2 3 4 2 (splitHeads 2 3 4 2 x)
/-- `crossEntropy` of logits against integer targets. -/
def pre_cross_entropy (logits : Tensor [5, 7]) (t : Index [5]) : Tensor [1, 1] :=
  crossEntropy logits t
