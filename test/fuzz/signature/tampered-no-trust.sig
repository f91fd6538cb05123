
{
 "bound_shapes": [],
 "bounds": [],
 "compiler": "attn-compile fuzz",
 "format_version": 6,
 "kernels": {
  "bounds": [
   null
  ],
  "files": {
   "0": "kernels/k.spv"
  },
  "hashes": "YbCAEMfbdbGZc05VJva0eAh6kuWLQ2zmIU8ecniDWy0",
  "kinds": [
   0
  ],
  "symbols": {
   "0": "./m::k"
  }
 },
 "kinds": [
  [
   "spirv",
   "main",
   {
    "subgroup_size": 8
   },
   ""
  ]
 ],
 "manifest_hash": "restamp",
 "parameter_keys": [
  [
   "num_heads",
   "op"
  ]
 ],
 "plans": [],
 "signature": {
  "ed25519": "b534cfd8b87f6c827de177f5c59d34106c8e0f3ffa9fa727698d9bda8f293fd5b6528d87ae1beeb7bb3a3803da524652e585e5942a084dc3b0f12d3415b6df09",
  "key": "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"
 },
 "variants": [
  [
   "merge_states.h4.d32.f32",
   [
    0,
    "64",
    "merge_states"
   ],
   [
    [
     0,
     "06167e564ec212a2c37f1dbe61d56b1fa2e850d643b327b2bdcdacf406b13ca5",
     null,
     [],
     [
      0,
      1
     ]
    ]
   ]
  ]
 ]
}