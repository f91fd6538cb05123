// Issue 14: head size 0 passed the verifier and divided by zero in the lowering.
func.func @pa_zero_head_size(%q: tensor<?x8x0xf16>, %c: tensor<?x2x16x8x0xf16>, %md: !attn.metadata, %o: tensor<?x8x0xf16>, %l: tensor<?x8xf32>) {
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x0xf16>, tensor<?x2x16x8x0xf16>, tensor<?x8x0xf16>, tensor<?x8xf32> -> tensor<?x8x0xf16>, tensor<?x8xf32>
  return
}
