"""The PyTorch CPU peer of `tilesmith train` on the residual MLP of
examples/mlp_classifier.lean (residualMlpLoss): the same model, loss,
batch and optimizer (AdamW, PyTorch's defaults but the learning rate),
float32, timed step by step on the same cores.  Prints one line:

    torch B D L threads: median ms/step (samples/s)

usage: python3 bench/train_peer.py B I D L C STEPS [THREADS]
"""
import statistics
import sys
import time

import torch


def main():
    B, I, D, L, C, steps = (int(a) for a in sys.argv[1:7])
    threads = int(sys.argv[7]) if len(sys.argv) > 7 else torch.get_num_threads()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    Win = torch.nn.Parameter(torch.randn(I, D) / I ** 0.5)
    G = torch.nn.Parameter(torch.ones(L, D))
    W = torch.nn.Parameter(torch.randn(L, D, D) / D ** 0.5)
    Wout = torch.nn.Parameter(torch.randn(D, C) / D ** 0.5)
    params = [Win, G, W, Wout]
    opt = torch.optim.AdamW(params, lr=3e-3, weight_decay=0.0)
    x = torch.rand(B, I)
    labels = torch.randint(0, C, (B,))

    def step():
        h = torch.relu(x @ Win)
        for l in range(L):
            n = h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-6) * G[l]
            h = h + torch.relu(n @ W[l])
        loss = torch.nn.functional.cross_entropy(h @ Wout, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    times = []
    for s in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times[min(3, steps - 1):])
    print(f"torch {torch.__version__} B{B} D{D} L{L} threads {threads}: {1e3 * med:.2f} ms/step ({B / med:.0f} samples/s)")


if __name__ == "__main__":
    main()
