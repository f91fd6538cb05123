signer require
{"format_version": 6,
"compiler": "attn-compile fuzz",
"manifest_hash": "95806c494ad9eb9899f0ac4064a73ee5b4a0b4608609fcdc78d06a059dd8d023",
"signature": {"ed25519":"b534cfd8b87f6c827de177f5c59d34106c8e0f3ffa9fa727698d9bda8f293fd5b6528d87ae1beeb7bb3a3803da524652e585e5942a084dc3b0f12d3415b6df09","key":"8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"},
"kinds": [
 ["spirv","main",{"subgroup_size":8},""]],
"bound_shapes": [],
"bounds": [],
"kernels": {
 "bounds": [null],
 "files": {"0":"kernels/k.spv"},
 "hashes": "YbCAEMfbdbGZc05VJva0eAh6kuWLQ2zmIU8ecniDWy0",
 "kinds": [0],
 "symbols": {"0":"./m::k"}},
"plans": [],
"parameter_keys": [
 ["num_heads","op"]],
"variants": [
 ["merge_states.h4.d32.f32",[0,"4","merge_states"],[[0,"06167e564ec212a2c37f1dbe61d56b1fa2e850d643b327b2bdcdacf406b13ca5",null,[],[0,1]]]]]}
