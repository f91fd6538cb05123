// Issue 14: scale 1e39 rounds to +inf in f32 and passed the verifier.
func.func @pa_inf_scale(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(1.0e39) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}
