grad tests/golden/ok/grad_small.lean --entry mseLoss --size M=4,K=3,N=2
