import Tilesmith
open Tilesmith

-- i / C on Index tensors was computed as a real quotient (the chunk mask
-- came out as the identity); Lean's rounds down, which no backend does yet
def chunkMask : Tensor [6, 6] :=
  let i := reshape (iota 6) [6, 1]
  let j := reshape (iota 6) [1, 6]
  cast (i / 3 == j / 3)
