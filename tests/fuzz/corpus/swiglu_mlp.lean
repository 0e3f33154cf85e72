import Tilesmith
open Tilesmith

/-- The SwiGLU MLP of a transformer: `(silu (x ⬝ Wg) * (x ⬝ Wu)) ⬝ Wd`, model
width `D`, hidden width `F`. -/
def swigluMlp (M D F : Nat) (x : Tensor [M, D]) (Wg Wu : Param [D, F]) (Wd : Param [F, D]) :
    Tensor [M, D] :=
  swiglu x Wg Wu ⬝ Wd

/-- The gated half alone, `silu (x ⬝ Wg) * (x ⬝ Wu)`: two matrix products
sharing their input. -/
def gatedMlp (M D F : Nat) (x : Tensor [M, D]) (Wg Wu : Param [D, F]) : Tensor [M, F] :=
  swiglu x Wg Wu

/-- 8192×4096, hidden 11008. -/
def swiglu_mlp_8k := swigluMlp 8192 4096 11008

/-- Small batch: 8×4096 with two 4096×4096 weights. -/
def gated_mlp_small := gatedMlp 8 4096 4096
