private open Tilesmith
