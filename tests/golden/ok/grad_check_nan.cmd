grad tests/grad/nan_grad.lean --entry whereSqrt --check
