def f := 1
import Tilesmith
