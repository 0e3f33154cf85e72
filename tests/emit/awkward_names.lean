import Tilesmith
open Tilesmith

/-- Parameter names that are not Python identifiers (`x'`, `W₁`, `α`), a
Python keyword (`pass`), names the emitted kernels use (`torch`, `i`, `k`)
and a name that starts like the module's own helpers (`_ts_check`): run()
must keep or spell each one as tests/emit/check_run_args.py expects. -/
def awkwardNames (x' : Tensor [4, 8]) (pass : Tensor [4, 8]) (W₁ : Param [8, 6]) (torch : Tensor [4, 8])
    (i : Tensor [4, 8]) (k : Tensor [1, 8]) (α : Tensor [4, 1]) (_ts_check : Tensor [6])
    (t : Index [4]) : Tensor [1, 1] :=
  crossEntropy (((x' + pass * torch - i) * k + α) ⬝ W₁ + _ts_check) t

/-- Parameters named like the reference's own variables (v0, v1): opt once
looped forever looking for a kernel-side name that did not start with v
and a digit. -/
def referenceNames (v0 : Tensor [4, 8]) (v1 : Tensor [4, 8]) : Tensor [4, 8] :=
  v0 * v1 + v0

/-- An Index result: reference() returns it as int64 (it once converted
every result to float32, rounding 3·2⁴⁰ + 1). -/
def shiftedIds (t : Index [4, 8]) : Index [4, 8] :=
  t * 3 + 1

/-- Parameters named like a Triton launch's keywords: the kernel once took
them as its own parameters, and the launch passed num_warps twice. -/
def launchNames (num_warps : Tensor [4, 8]) (num_stages : Tensor [4, 8]) (grid : Tensor [4, 8]) : Tensor [4, 8] :=
  num_warps * 2 + num_stages - grid

/-- Inputs named like what the TileLang kernel allocates beside its tiles:
the shared copy of a row state (`S0_s`) and a staged store's tile (`Ost5`,
with TS_TL_STAGE_STORE=1).  The kernel's parameter took the input's name
and the allocation shadowed it. -/
def stagedNames (S0_s : Tensor [16384, 4096]) (g : Param [4096]) (Ost5 : Param [4096, 4096]) :
    Tensor [16384, 4096] :=
  rmsnorm S0_s g ⬝ Ost5

/-- Inputs named like the Triton kernel's tensor descriptors (`_tma0`,
with the schedule's copy=1 or TS_TR_TMA=1): a kernel parameter of that
name would be shadowed by the descriptor made from it. -/
def tmaNames (_tma0 : Tensor [256, 512]) (_tma1 : Param [512, 256]) : Tensor [256, 256] :=
  _tma0 ⬝ _tma1
