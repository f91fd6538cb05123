// Issue 14: huge head counts ended in "LLVM ERROR: out of memory".
func.func @pa_huge_heads(%q: tensor<?x8192x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8192x64xf16>, %l: tensor<?x8192xf32>) {
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8192x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8192x64xf16>, tensor<?x8192xf32> -> tensor<?x8192x64xf16>, tensor<?x8192xf32>
  return
}
