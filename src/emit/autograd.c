/*
 * autograd.c: apply(...), the entry with a backward pass (opt --grad).
 *
 * `tilesmith opt --grad` writes two modules: the entry's, and beside it
 * the backward pass's, an entry of its own (src/grad: grad_vjp) searched,
 * lowered and emitted like any other, taking the entry's arguments and the
 * output's gradient and returning the gradients of every real argument,
 * flattened and concatenated into one vector.  What this file appends to
 * the entry's module ties them together: a torch.autograd.Function whose
 * forward is run() (arguments checked the same way) and whose backward
 * calls the backward module's run() and cuts its vector into one gradient
 * per argument, in the argument's shape; Index arguments get None; and
 * register_autograd(), the same as a torch.library custom op: register()'s
 * op with torch.library.register_autograd pointing at the backward module's
 * op, so torch.compile and CUDA graphs take both passes.  The
 * backward recomputes the forward's intermediates instead of saving them
 * (only the arguments are kept), as activation checkpointing does.
 */
#include <string.h>

#include "emit.h"

bool emit_autograd(FILE *out, const TileProgram *fwd, Target t, const char *backward_file, const int *diff,
                   int ndiff, char *err, size_t errlen) {
  Emit e = emit_begin(out, fwd, t, NULL);
  const Graph *g = fwd->g;
  const char *pre = e.pre, *odt = emit_torch_dtype(fwd->output->dtype);
  const char *opname = emit_op_name(&e, g->entry ? g->entry : "entry");
  emit_printf(&e, "\n\n# ---- autograd (tilesmith opt --grad) ----\n\n"
                  "# the backward pass's module, beside this one\n%sBACKWARD_FILE = \"%s\"\n"
                  "# run()'s arguments that get a gradient: (position, shape, elements)\n%sDIFF = (\n",
              pre, backward_file, pre);
  for (int k = 0; k < ndiff; k++) {
    const TBuf *b = fwd->of_node[g->inputs[diff[k]]->id];
    emit_printf(&e, "    (%d, %s, %lld),\n", diff[k], emit_shape_tuple(&e, b), (long long)shape_numel(&b->shape));
  }
  emit_printf(&e,
              ")\n%sBWD = []\n\n\n"
              "def %sbackward_module():\n"
              "    \"\"\"The backward pass's module, loaded once from beside this file.\"\"\"\n"
              "    if not %sBWD:\n"
              "        import importlib.util\n"
              "        import os\n"
              "        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), %sBACKWARD_FILE)\n"
              "        spec = importlib.util.spec_from_file_location(__name__ + \"_backward\", path)\n"
              "        mod = importlib.util.module_from_spec(spec)\n"
              "        spec.loader.exec_module(mod)\n"
              "        %sBWD.append(mod)\n"
              "    return %sBWD[0]\n\n\n",
              pre, pre, pre, pre, pre, pre);
  emit_printf(&e,
              "def %scut(flat, nargs):\n"
              "    \"\"\"The backward module's flat vector cut into one gradient per argument\n"
              "    (None for those without one), in the argument's shape.\"\"\"\n"
              "    grads = [None] * nargs\n"
              "    at = 0\n"
              "    for i, shape, n in %sDIFF:\n"
              "        grads[i] = flat[at:at + n].view(shape)\n"
              "        at += n\n"
              "    return tuple(grads)\n\n\n",
              pre, pre);
  emit_printf(&e,
              "def %son_cpu(args):\n"
              "    return all(a.device.type == \"cpu\" for a in args if isinstance(a, torch.Tensor))\n\n\n"
              "class Function(torch.autograd.Function):\n"
              "    \"\"\"run() with a backward pass: the gradients of every real argument from\n"
              "    the backward module's kernels (which recompute the forward's\n"
              "    intermediates from the saved arguments).  Index arguments get none.\n"
              "    On CPU tensors (any real dtype: float64 for torch.autograd.gradcheck) both\n"
              "    passes are the modules' references instead: the gradient graph that the\n"
              "    backward kernels compute, checked without a GPU.\"\"\"\n\n"
              "    @staticmethod\n"
              "    def forward(ctx, *args):\n"
              "        cpu = %son_cpu(args)\n"
              "        args = %scheck(\"apply\", args, strict=not cpu)\n"
              "        ctx.save_for_backward(*args)\n"
              "        return (%sreference if cpu else %srun)(*args)\n\n"
              "    @staticmethod\n"
              "    def backward(ctx, gy):\n"
              "        args, bwd = ctx.saved_tensors, %sbackward_module()\n"
              "        if %son_cpu(args):\n"
              "            return %scut(bwd.reference(*args, gy), len(args))\n"
              "        return %scut(bwd.run(*args, gy.to(%s).contiguous()), len(args))\n\n\n",
              pre, pre, pre, pre, pre, pre, pre, pre, pre, odt);
  emit_printf(&e,
              "%sAUTOGRAD = {}\n\n\n"
              "def register_autograd(namespace=\"tilesmith\"):\n"
              "    \"\"\"register() with the backward pass attached: the custom op\n"
              "    torch.ops.<namespace>.%s differentiates through the op\n"
              "    torch.ops.<namespace>.%s_backward (the backward module's register()),\n"
              "    so torch.compile traces forward and backward as two opaque ops with fake\n"
              "    implementations, and CUDA graphs capture both.  Returns the forward op;\n"
              "    calling it again with the same namespace returns the same op.\"\"\"\n"
              "    if namespace not in %sAUTOGRAD:\n"
              "        op = register(namespace)\n"
              "        bop = %sbackward_module().register(namespace)\n\n"
              "        def setup_context(ctx, inputs, output):\n"
              "            ctx.save_for_backward(*inputs)\n\n"
              "        def backward(ctx, gy):\n"
              "            args = ctx.saved_tensors\n"
              "            return %scut(bop(*args, gy.to(%s).contiguous()), len(args))\n\n"
              "        torch.library.register_autograd(op, backward, setup_context=setup_context)\n"
              "        %sAUTOGRAD[namespace] = op\n"
              "    return %sAUTOGRAD[namespace]\n\n\n",
              pre, opname, opname, pre, pre, pre, odt, pre, pre);
  emit_printf(&e, "def apply(");
  for (int i = 0; i < g->ninputs; i++) emit_printf(&e, "%s%s", i ? ", " : "", e.pname[i]);
  emit_printf(&e,
              "):\n"
              "    \"\"\"run() that records a backward pass for torch.autograd: takes the same\n"
              "    arguments, checked the same way; loss.backward() then fills .grad of\n"
              "    every real argument that requires it, from the kernels of %s.\"\"\"\n"
              "    return Function.apply(",
              backward_file);
  for (int i = 0; i < g->ninputs; i++) emit_printf(&e, "%s%s", i ? ", " : "", e.pname[i]);
  emit_printf(&e, ")\n");
  return emit_end(&e, err, errlen);
}
