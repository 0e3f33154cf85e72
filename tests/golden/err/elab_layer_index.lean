def f (x : Tensor [2, 3]) (W : Param [2, 3, 3]) := layers 3 x (fun l h => h ⬝ W[l])
