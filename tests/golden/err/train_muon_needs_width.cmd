train @FILE --entry mlp_digits --optimizer muon --data x=a.npy
