graph examples/softcap_window_attention.lean --entry softcapWindowAttention --size B=2,H=2,N=8,D=4,W=3
