// Issue 14: a huge num_kv_splits ended in "LLVM ERROR: out of memory".
func.func @mla_huge_splits(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x576xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>) {
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) num_kv_splits(100000) : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32> -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return
}
