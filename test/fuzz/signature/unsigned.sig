signer require
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
 "variants": [
  [
   "merge_states.h4.d32.f32",
   [
    0,
    "4",
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