import Tilesmith
open Tilesmith

/-- Per-position classification in the channels-first layout of PyTorch's
`cross_entropy` on [B, C, L] logits: log-softmax over the middle (class) axis,
negative log-likelihood picked by gather along that axis, averaged. -/
def nllChannels (B C L : Nat) (z : Tensor [B, C, L]) (t : Index [B, 1, L]) : Tensor [1, 1] :=
  let lp := logSoftmax z (dim := 1)
  let nll := 0 - gather lp t (dim := 1)
  reshape (mean (mean nll) (dim := 0)) [1, 1]

/-- The same with the logits from a 1x1 convolution (a product over channels):
z = Wᵀ x for x : [B, Cin, L]. -/
def nllConv (B Cin C L : Nat) (x : Tensor [B, Cin, L]) (W : Param [C, Cin])
    (t : Index [B, 1, L]) : Tensor [1, 1] :=
  nllChannels B C L (W ⬝ x) t

def nll_channels_odd := nllChannels 3 37 45
def nll_channels_big := nllChannels 16 1000 4096
def nll_conv_odd := nllConv 3 24 37 45
def nll_conv_big := nllConv 8 512 1000 2048
