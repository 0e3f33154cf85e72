/-
Tilesmith: the library of the tilesmith model language.

This one file serves two readers.

* Lean 4.  It declares every name a tilesmith program uses, so a `.lean` model
  that starts with `import Tilesmith` / `open Tilesmith` type-checks in an
  editor (`lake build` at the repository's root checks this file, every
  example and tests/prims.lean; see lakefile.toml for the Lean release).
  What can be proven about a model is limited by design: the prelude's
  definitions unfold (`softmax x` is `exp (x - amax x) / ...` by `rfl`), but
  the primitives and the shape functions are opaque, so no fact about a
  primitive's values or about a shape (that `Shape.matmul [m, k] [k, n]` is
  `[m, n]`) can be proven; shapes are documentation to Lean and the
  compiler checks them.  The arithmetic instances and the notations are
  `scoped`: they apply where `open Tilesmith` is.
* The tilesmith compiler.  The file is embedded in the binary and parsed by
  its own front end, which reads only the `def`s and `abbrev`s (the prelude
  below) and skips every other command (`opaque`, `instance`, `class`,
  `structure`, `notation`, `infixl`, ...) up to the next line that starts a
  command at column 1.  The primitives are built into the compiler; their
  `opaque` declarations here are for Lean only.

How shapes are modelled in Lean.  `Tensor s` is a reducible alias of one type,
`TensorData`, whatever the shape `s`: the shape index documents the program
and drives implicit arguments, but Lean does not check it (`Shape.broadcast`,
`Shape.matmul` and the other shape functions are opaque, so Lean could not
reduce them to compare shapes anyway).  The tilesmith compiler checks every
shape, at every operator, with both shapes in its error message.

Naming: the `opaque` declarations whose names have no dot are exactly the
compiler's primitives (src/front/builtins.c); the dotted ones (`Shape.*`,
`Op.*`) exist for Lean only.

A Lean caveat: a compile-time function of a numeral inside tensor arithmetic
(`x / sqrt 2`) leaves Lean unable to tell that `sqrt 2` is a `Float`; write
it from a `Nat` variable (`sqrt D`), or name it first
(`let c : Float := sqrt 2.0`).  The compiler accepts all three forms.

Rules for the prelude (the `def`s below): only the language subset of
LANGUAGE.md: `let`, `fun`, application, named arguments `(dim := 1)`,
operators, lists; binders `{s : Shape}`, `(x : Tensor s)`, `(dim : Int := -1)`.
Do not name a `def` like a primitive: a definition shadows the built-in.
-/

namespace Tilesmith

/-! ## Shapes and tensors (Lean only, apart from the aliases) -/

/-- A shape: the sizes of the dimensions, outermost first. -/
abbrev Shape := List Nat

/-- The value of a tensor, as a Lean model: its dimensions and its elements in
row-major order.  Tilesmith programs never look inside; the compiler keeps
tensors symbolic. -/
structure TensorData where
  /-- The sizes of the dimensions. -/
  dims : List Nat
  /-- The elements, in row-major order. -/
  elems : List Float
deriving Inhabited

/-- A real tensor of shape `s`, e.g. `Tensor [B, N, D]`: an activation or an
input.  (For Lean, all shapes share one type; the compiler checks shapes.) -/
abbrev Tensor (_shape : Shape) := TensorData

/-- A learnable weight of shape `s`.  The same as `Tensor` for kernels; the
hyperparameter tools treat `Param` binders as the model's weights. -/
abbrev Param (s : Shape) := Tensor s

/-- An integer tensor of shape `s`: class targets, token ids, the indices of
`gather`, and `iota`.  Comparisons give boolean masks, also typed `Tensor`. -/
abbrev Index (s : Shape) := Tensor s

/-- NumPy broadcasting of two shapes (computed by the compiler). -/
opaque Shape.broadcast (s t : Shape) : Shape

/-- `s` with dimension `dim` (negative counts from the end) set to 1. -/
opaque Shape.reduced (s : Shape) (dim : Int) : Shape

/-- The shape of `a ⬝ b`: batch dimensions broadcast, `[m, k] ⬝ [k, n] = [m, n]`. -/
opaque Shape.matmul (s t : Shape) : Shape

/-- `s` with its last two dimensions swapped. -/
opaque Shape.transposed (s : Shape) : Shape

/-- Dimension `i` of the result is dimension `perm[i]` of `s`. -/
opaque Shape.permuted (s : Shape) (perm : List Nat) : Shape

/-- `s` with dimension `dim` cut to `hi - lo`. -/
opaque Shape.sliced (s : Shape) (lo hi : Nat) (dim : Int) : Shape

/-- The shape of a concatenation along `dim` of tensors whose first has shape `s`. -/
opaque Shape.concatenated (s : Shape) (n : Nat) (dim : Int) : Shape

/-- The shape of `gather x idx dim`: `idx`'s along `dim`, the others broadcast. -/
opaque Shape.gathered (s t : Shape) (dim : Int) : Shape

/-! ## The element operations behind the operators (Lean only) -/

/-- A scalar as a rank-0 tensor. -/
opaque Op.const : Float → TensorData
/-- Elementwise negation. -/
opaque Op.neg : TensorData → TensorData
/-- Elementwise `+`, broadcasting. -/
opaque Op.add : TensorData → TensorData → TensorData
/-- Elementwise `-`, broadcasting. -/
opaque Op.sub : TensorData → TensorData → TensorData
/-- Elementwise `*`, broadcasting. -/
opaque Op.mul : TensorData → TensorData → TensorData
/-- Elementwise `/`, broadcasting. -/
opaque Op.div : TensorData → TensorData → TensorData
/-- Elementwise `^`, broadcasting. -/
opaque Op.pow : TensorData → TensorData → TensorData
/-- Elementwise `<`: a boolean mask. -/
opaque Op.lt : TensorData → TensorData → TensorData
/-- Elementwise `≤`: a boolean mask. -/
opaque Op.le : TensorData → TensorData → TensorData
/-- Elementwise `>`: a boolean mask. -/
opaque Op.gt : TensorData → TensorData → TensorData
/-- Elementwise `≥`: a boolean mask. -/
opaque Op.ge : TensorData → TensorData → TensorData
/-- Elementwise `==`: a boolean mask. -/
opaque Op.eq : TensorData → TensorData → TensorData
/-- Elementwise `≠`: a boolean mask. -/
opaque Op.ne : TensorData → TensorData → TensorData
/-- `W[l]`: slice `l` of a stacked parameter along its leading dimension. -/
opaque Op.layer : TensorData → Nat → TensorData

/-- `Elementwise α β γ`: a binary elementwise operation takes an `α` and a `β`
and gives a `γ`.  Tensors broadcast as NumPy does; a `Float` or a `Nat` beside
a tensor is a scalar constant.  (No instance for two numbers: `Nat` and
`Float` arithmetic stays Lean's own.) -/
class Elementwise (α β : Type) (γ : outParam Type) where
  /-- Lift an operation on tensors to operands of these types. -/
  lift2 : (TensorData → TensorData → TensorData) → α → β → γ

instance {s t : Shape} : Elementwise (Tensor s) (Tensor t) (Tensor (Shape.broadcast s t)) :=
  Elementwise.mk (fun f a b => f a b)

instance {s : Shape} : Elementwise (Tensor s) Float (Tensor s) :=
  Elementwise.mk (fun f a b => f a (Op.const b))

instance {s : Shape} : Elementwise Float (Tensor s) (Tensor s) :=
  Elementwise.mk (fun f a b => f (Op.const a) b)

instance {s : Shape} : Elementwise (Tensor s) Nat (Tensor s) :=
  Elementwise.mk (fun f a b => f a (Op.const (Nat.toFloat b)))

instance {s : Shape} : Elementwise Nat (Tensor s) (Tensor s) :=
  Elementwise.mk (fun f a b => f (Op.const (Nat.toFloat a)) b)

scoped instance {α β γ : Type} [Elementwise α β γ] : HAdd α β γ :=
  HAdd.mk (Elementwise.lift2 Op.add)

scoped instance {α β γ : Type} [Elementwise α β γ] : HSub α β γ :=
  HSub.mk (Elementwise.lift2 Op.sub)

scoped instance {α β γ : Type} [Elementwise α β γ] : HMul α β γ :=
  HMul.mk (Elementwise.lift2 Op.mul)

scoped instance {α β γ : Type} [Elementwise α β γ] : HDiv α β γ :=
  HDiv.mk (Elementwise.lift2 Op.div)

scoped instance {α β γ : Type} [Elementwise α β γ] : HPow α β γ :=
  HPow.mk (Elementwise.lift2 Op.pow)

instance {s : Shape} : Neg (Tensor s) :=
  Neg.mk Op.neg

/-- A numeral used as a tensor (`x + 1`, `1 / x`) is a scalar constant. -/
instance {s : Shape} {n : Nat} : OfNat (Tensor s) n :=
  OfNat.mk (Op.const (Nat.toFloat n))

/-- A decimal used as a tensor (`0.5 * x`) is a scalar constant. -/
instance {s : Shape} : OfScientific (Tensor s) :=
  OfScientific.mk (fun m e d => Op.const (OfScientific.ofScientific m e d))

/-- `W[l]`: layer `l` of a parameter stacked along its leading dimension
(`W : Param [L, D, D]` gives `W[l] : Tensor [D, D]`).  No bound proof is
needed: the compiler checks the index. -/
instance {s : Shape} : GetElem (Tensor s) Nat (Tensor (List.tail s)) (fun _ _ => True) :=
  GetElem.mk (fun x i _ => Op.layer x i)

/-- `Pointwise α β`: an elementwise function takes an `α` to a `β`: a tensor to
a tensor of the same shape, a compile-time number (`sqrt D`) to a `Float`. -/
class Pointwise (α : Type) (β : outParam Type) where
  /-- Apply a function given by its tensor form and its scalar form. -/
  apply : (TensorData → TensorData) → (Float → Float) → α → β

instance {s : Shape} : Pointwise (Tensor s) (Tensor s) :=
  Pointwise.mk (fun f _ x => f x)

instance : Pointwise Float Float :=
  Pointwise.mk (fun _ g x => g x)

instance : Pointwise Nat Float :=
  Pointwise.mk (fun _ g x => g (Nat.toFloat x))

/-! ## Primitives

Built into the compiler (src/front/builtins.c); declared here for Lean.
Optional parameters come last; a negative `dim` counts from the end.
Reductions keep the reduced dimension with size 1. -/

/-- `exp x`, elementwise (on a number: at compile time). -/
opaque exp {α β : Type} [Pointwise α β] [Inhabited β] (x : α) : β
/-- Natural logarithm, elementwise. -/
opaque log {α β : Type} [Pointwise α β] [Inhabited β] (x : α) : β
/-- Square root, elementwise; `sqrt D` of a `Nat` is a compile-time `Float`. -/
opaque sqrt {α β : Type} [Pointwise α β] [Inhabited β] (x : α) : β
/-- `1 / sqrt x`, elementwise. -/
opaque rsqrt {α β : Type} [Pointwise α β] [Inhabited β] (x : α) : β
/-- Hyperbolic tangent, elementwise. -/
opaque tanh {α β : Type} [Pointwise α β] [Inhabited β] (x : α) : β
/-- The error function, elementwise. -/
opaque erf {α β : Type} [Pointwise α β] [Inhabited β] (x : α) : β
/-- `1 / (1 + exp (-x))`, elementwise. -/
opaque sigmoid {α β : Type} [Pointwise α β] [Inhabited β] (x : α) : β
/-- `max x 0`, elementwise. -/
opaque relu {α β : Type} [Pointwise α β] [Inhabited β] (x : α) : β
/-- Absolute value, elementwise. -/
opaque abs {α β : Type} [Pointwise α β] [Inhabited β] (x : α) : β
/-- An `Index` tensor or a boolean mask as a real tensor (0/1 for masks). -/
opaque cast {s : Shape} (x : Tensor s) : Tensor s

/-- Elementwise maximum of two operands, broadcasting. -/
opaque max {α β γ : Type} [Elementwise α β γ] [Inhabited γ] (a : α) (b : β) : γ
/-- Elementwise minimum of two operands, broadcasting. -/
opaque min {α β γ : Type} [Elementwise α β γ] [Inhabited γ] (a : α) (b : β) : γ

/-- Sum along `dim`, keeping it with size 1. -/
opaque sum {s : Shape} (x : Tensor s) (dim : Int := -1) : Tensor (Shape.reduced s dim)
/-- Maximum along `dim`, keeping it with size 1. -/
opaque amax {s : Shape} (x : Tensor s) (dim : Int := -1) : Tensor (Shape.reduced s dim)
/-- Minimum along `dim`, keeping it with size 1. -/
opaque amin {s : Shape} (x : Tensor s) (dim : Int := -1) : Tensor (Shape.reduced s dim)

/-- Matrix product, written `a ⬝ b`: contracts the last dimension of `a` with
the second-to-last of `b`; leading dimensions broadcast as batch dimensions. -/
opaque matmul {s t : Shape} (a : Tensor s) (b : Tensor t) : Tensor (Shape.matmul s t)
/-- Swap the last two dimensions, written `aᵀ`. -/
opaque transpose {s : Shape} (a : Tensor s) : Tensor (Shape.transposed s)
/-- Reorder dimensions: dimension `i` of the result is dimension `perm[i]` of `x`. -/
opaque permute {s : Shape} (x : Tensor s) (perm : List Nat) : Tensor (Shape.permuted s perm)
/-- The same elements, row-major, in the shape `dims` (one entry may be -1 in
the compiler: inferred). -/
opaque reshape {s : Shape} (x : Tensor s) (dims : List Nat) : Tensor dims
/-- Join tensors along `dim`; the other dimensions must agree. -/
opaque concat {s : Shape} (xs : List (Tensor s)) (dim : Int := 0) :
    Tensor (Shape.concatenated s (List.length xs) dim)
/-- The entries `lo ≤ i < hi` along `dim`: `slice x 0 64 (dim := 1)`. -/
opaque slice {s : Shape} (x : Tensor s) (lo hi : Nat) (dim : Int := -1) : Tensor (Shape.sliced s lo hi dim)
/-- `numpy.take_along_axis x idx dim`, the dimensions other than `dim`
broadcast between `x` and `idx`.  Embeddings: `gather E (reshape ids [T, 1]) (dim := 0)`;
picking targets: `gather logits (reshape t [B, 1])`. -/
opaque gather {s t : Shape} (x : Tensor s) (idx : Index t) (dim : Int := -1) : Tensor (Shape.gathered s t dim)
/-- `0, 1, ..., n-1` as an integer tensor. -/
opaque iota (n : Nat) : Index [n]
/-- `select c a b`: `a` where the mask `c` holds, else `b`, broadcasting. -/
opaque select {s : Shape} {α β γ : Type} [Elementwise α β γ] [Inhabited γ]
    (c : Tensor s) (a : α) (b : β) : γ
/-- The size of dimension `dim` of `x`, a compile-time `Nat`. -/
opaque size {s : Shape} (x : Tensor s) (dim : Int := -1) : Nat
/-- Positive infinity. -/
opaque inf : Float
/-- Negative infinity (masked attention scores). -/
opaque neginf : Float
/-- `layers n init f` is `f (n-1) (... (f 1 (f 0 init)))`: Lean's `Nat.fold`,
the depth of a model.  Weights are stacked along a leading dimension `L` and
read as `W[l]`. -/
opaque layers {α : Type} [Inhabited α] (n : Nat) (init : α) (f : Nat → α → α) : α

/-- `a ⬝ b` is `matmul a b` (precedence 70, like `*`). -/
scoped infixl:70 " ⬝ " => Tilesmith.matmul
/-- `aᵀ` is `transpose a`. -/
scoped postfix:max "ᵀ" => Tilesmith.transpose

/-! Comparisons of tensors give boolean masks.  They overload Lean's own
notations, which give a `Prop` (or a `Bool`) and need both sides of one type,
only where `open Tilesmith` is (they are `scoped`); there, where both
readings could apply (`a ≠ b` on two tensors with no expected type), Lean
reports an ambiguity: give the mask to `select` or `cast` directly. -/

/-- `a < b`: a mask. -/
scoped infix:50 " < " => Tilesmith.Elementwise.lift2 Tilesmith.Op.lt
/-- `a ≤ b`: a mask. -/
scoped infix:50 " ≤ " => Tilesmith.Elementwise.lift2 Tilesmith.Op.le
/-- `a <= b`: a mask. -/
scoped infix:50 " <= " => Tilesmith.Elementwise.lift2 Tilesmith.Op.le
/-- `a > b`: a mask. -/
scoped infix:50 " > " => Tilesmith.Elementwise.lift2 Tilesmith.Op.gt
/-- `a ≥ b`: a mask. -/
scoped infix:50 " ≥ " => Tilesmith.Elementwise.lift2 Tilesmith.Op.ge
/-- `a >= b`: a mask. -/
scoped infix:50 " >= " => Tilesmith.Elementwise.lift2 Tilesmith.Op.ge
/-- `a == b`: a mask. -/
scoped infix:50 " == " => Tilesmith.Elementwise.lift2 Tilesmith.Op.eq
/-- `a ≠ b`: a mask. -/
scoped infix:50 " ≠ " => Tilesmith.Elementwise.lift2 Tilesmith.Op.ne
/-- `a != b`: a mask. -/
scoped infix:50 " != " => Tilesmith.Elementwise.lift2 Tilesmith.Op.ne

/-! ## The prelude

Ordinary definitions in the language subset.  The compiler inlines them, so
its optimizer sees only primitives. -/

/-- `x * x`, elementwise. -/
def square {s : Shape} (x : Tensor s) : Tensor s :=
  x * x

/-- `1 / x`, elementwise. -/
def reciprocal {s : Shape} (x : Tensor s) : Tensor s :=
  1 / x

/-- The mean along `dim`, keeping it with size 1. -/
def mean {s : Shape} (x : Tensor s) (dim : Int := -1) :=
  sum x dim / size x dim

/-- The population variance along `dim` (PyTorch's `unbiased=False`), keeping
it with size 1. -/
def var {s : Shape} (x : Tensor s) (dim : Int := -1) :=
  let d := x - mean x dim
  mean (d * d) dim

/-- `log (sum (exp x))` along `dim`, keeping it with size 1, computed with the
maximum subtracted so that no `exp` overflows. -/
def logsumexp {s : Shape} (x : Tensor s) (dim : Int := -1) :=
  let m := amax x dim
  m + log (sum (exp (x - m)) dim)

/-- Softmax along `dim`, the maximum subtracted first. -/
def softmax {s : Shape} (x : Tensor s) (dim : Int := -1) : Tensor s :=
  let e := exp (x - amax x dim)
  e / sum e dim

/-- Log-softmax along `dim`: `x - logsumexp x dim`, computed from `x - max`. -/
def logSoftmax {s : Shape} (x : Tensor s) (dim : Int := -1) : Tensor s :=
  let z := x - amax x dim
  z - log (sum (exp z) dim)

/-- RMS normalization over the last dimension with gain `w`:
`x * rsqrt (mean (x * x) + eps) * w`. -/
def rmsnorm {s t : Shape} (x : Tensor s) (w : Tensor t) (eps : Float := 1e-6) : Tensor s :=
  x * rsqrt (mean (square x) + eps) * w

/-- Layer normalization over the last dimension with gain `w` and bias `b`
(population variance, as PyTorch's `layer_norm`). -/
def layernorm {s t u : Shape} (x : Tensor s) (w : Tensor t) (b : Tensor u) (eps : Float := 1e-5) :
    Tensor s :=
  let d := x - mean x
  d * rsqrt (mean (square d) + eps) * w + b

/-- SiLU (swish): `x * sigmoid x`. -/
def silu {s : Shape} (x : Tensor s) : Tensor s :=
  x * sigmoid x

/-- GELU, the exact form (PyTorch's default): `0.5 * x * (1 + erf (x / sqrt 2))`,
with `1 / sqrt 2` written out as PyTorch's `M_SQRT1_2`. -/
def gelu {s : Shape} (x : Tensor s) : Tensor s :=
  0.5 * x * (1 + erf (x * 0.7071067811865476))

/-- GELU, the tanh approximation (PyTorch's `approximate='tanh'`):
`0.5 * x * (1 + tanh (sqrt (2 / π) * (x + 0.044715 * x ^ 3)))`. -/
def geluTanh {s : Shape} (x : Tensor s) : Tensor s :=
  0.5 * x * (1 + tanh (0.7978845608028654 * (x + 0.044715 * (x * x * x))))

/-- Softplus `log (1 + exp x)`, in the stable form `relu x + log (1 + exp (-|x|))`. -/
def softplus {s : Shape} (x : Tensor s) : Tensor s :=
  relu x + log (1 + exp (-(abs x)))

/-- Soft-capping `c * tanh (x / c)` (attention logits, e.g. `c = 50`). -/
def softcap {s : Shape} (x : Tensor s) (c : Float) : Tensor s :=
  c * tanh (x / c)

/-- The causal mask on the last two dimensions of attention scores: entry
`(i, j)` is kept where `j ≤ i` and set to `-∞` elsewhere. -/
def causalMask {s : Shape} (x : Tensor s) : Tensor s :=
  let n := size x (dim := -2)
  let m := size x
  let i := reshape (iota n) [n, 1]
  let j := reshape (iota m) [1, m]
  select (j ≤ i) x neginf

/-- A linear layer without bias: `x ⬝ w`. -/
def linear {s t : Shape} (x : Tensor s) (w : Tensor t) :=
  x ⬝ w

/-- A linear layer with bias: `x ⬝ w + b`. -/
def linearBias {s t u : Shape} (x : Tensor s) (w : Tensor t) (b : Tensor u) :=
  x ⬝ w + b

/-- The SwiGLU gate: `silu (x ⬝ wg) * (x ⬝ wu)`. -/
def swiglu {s t u : Shape} (x : Tensor s) (wg : Tensor t) (wu : Tensor u) :=
  silu (x ⬝ wg) * (x ⬝ wu)

/-- Embedding lookup: row `ids[t]` of `table`, for each `t` (a table
`[V, D]` and ids `[T]` give `[T, D]`).  The shapes are left generic so that
Lean infers them from any argument, `embed (x ⬝ W) ids` included; the
compiler checks them. -/
def embed {s t : Shape} (table : Tensor s) (ids : Index t) :=
  let T := size ids (dim := 0)
  gather table (reshape ids [T, 1]) (dim := 0)

/-- Split the last dimension into `H` heads of size `Dh` and move heads before
the sequence: `[B, N, H * Dh]` to `[B, H, N, Dh]`. -/
def splitHeads (B N H Dh : Nat) (x : Tensor [B, N, H * Dh]) : Tensor [B, H, N, Dh] :=
  permute (reshape x [B, N, H, Dh]) [0, 2, 1, 3]

/-- The inverse of `splitHeads`: `[B, H, N, Dh]` to `[B, N, H * Dh]`. -/
def mergeHeads (B N H Dh : Nat) (x : Tensor [B, H, N, Dh]) : Tensor [B, N, H * Dh] :=
  reshape (permute x [0, 2, 1, 3]) [B, N, H * Dh]

/-- Mean cross-entropy of `logits : [B, V]` against integer `targets : [B]`:
the mean over rows of `logsumexp` of the row minus the target's logit.
The result has shape `[1, 1]`.  (Shapes generic, as for `embed`.) -/
def crossEntropy {s t : Shape} (logits : Tensor s) (targets : Index t) : Tensor [1, 1] :=
  let B := size targets (dim := 0)
  let picked := gather logits (reshape targets [B, 1])
  mean (logsumexp logits - picked) (dim := 0)

end Tilesmith
