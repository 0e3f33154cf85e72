"""A stand-in for `torch`, enough for tilelang 0.1.15 to import, lower and build
(tilelang.lower, tilelang.compile with execution_backend="tvm_ffi") with no GPU.

Only for install_here.sh --torch stub, which puts it in a dedicated venv.  It
cannot make tensors or run kernels; any other torch attribute raises
AttributeError.  Checked against tilelang 0.1.15 only: the lowered CUDA was
byte-identical to the one produced with the real torch 2.11.0.
"""
__tilesmith_stub__ = True
import types as _types
__version__ = "0.0.0+stub"
class dtype:
    def __init__(self, name, bits=32, is_fp=True): self.name, self.itemsize, self.is_floating_point = name, bits // 8, is_fp
    def __repr__(self): return "torch." + self.name
class Tensor: pass
class device:
    def __init__(self, *a, **k): pass
class Size(tuple): pass
_names = dict(bool=8, short=16, int=32, long=64, half=16, float=32, double=64, int8=8, int16=16, int32=32, int64=64,
              uint8=8, uint16=16, uint32=32, uint64=64, float16=16, float32=32, float64=64, bfloat16=16,
              float8_e4m3fn=8, float8_e5m2=8, float8_e4m3fnuz=8, float8_e5m2fnuz=8, float8_e8m0fnu=8, float4_e2m1fn_x2=8,
              complex64=64, complex128=128)
for _n, _b in _names.items(): globals()[_n] = dtype(_n, _b)
version = _types.SimpleNamespace(cuda=None, hip=None)
class _Cuda:
    @staticmethod
    def is_available(): return False
    @staticmethod
    def device_count(): return 0
    def __getattr__(self, k): raise AttributeError(k)
cuda = _Cuda()
backends = _types.SimpleNamespace(mps=_types.SimpleNamespace(is_available=lambda: False))
def __getattr__(name):
    raise AttributeError(f"torch stub has no attribute {name!r}")
