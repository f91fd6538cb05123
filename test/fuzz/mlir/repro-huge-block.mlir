// Issue 14: a huge block size ended in "LLVM ERROR: out of memory".
func.func @pa_huge_block(%q: tensor<?x8x64xf16>, %c: tensor<?x2x1000000000x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x1000000000x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}
